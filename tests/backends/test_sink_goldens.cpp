// Attention sinks and massive activations (analysis/attention_sinks.h) on each backend against
// tools/golden/make_sink_goldens.py: float64 PyTorch hooks on the torch modules of the golden
// GPT-2 and Qwen2 (Llama family) and models_ref.py's attention maps, computed from the
// definitions, not from the engine. Per layer the 4 largest residual-stream activations (token
// and dimension exactly, value), the median magnitude, the layer where they arise, every head's
// first-token share, and the zero-massive and drop-first ablations' mean KL, top-1 changes and
// (drop-first) shares after, all within 1e-4.
#include "analysis/attention_sinks.h"
#include "backend_fixture.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace headlight;

namespace {

constexpr double kSinkTolerance = 1e-4;

QJsonArray sinkGoldenCases() {
    QFile file(HEADLIGHT_TEST_DATA "/sinks/golden.json");
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
    return QJsonDocument::fromJson(file.readAll()).object()["cases"].toArray();
}

// The largest |expected − actual| over [L][H] shares against layer-major ones.
double shareDiff(const QJsonValue& expected, const std::vector<double>& actual) {
    double worst = 0.0;
    std::size_t i = 0;
    for (const QJsonValue& layer : expected.toArray())
        for (const QJsonValue& share : layer.toArray())
            worst = std::max(worst, std::abs(share.toDouble() - actual.at(i++)));
    return i == actual.size() ? worst : INFINITY;
}

// The largest difference in values and medians; NaN when a token or dimension differs.
double activationDiff(const QJsonArray& expected, const analysis::SinkReport& report) {
    double worst = 0.0;
    for (qsizetype l = 0; l < expected.size(); ++l) {
        const analysis::LargestActivations& got = report.activations.at(std::size_t(l));
        const QJsonArray top = expected[l]["top"].toArray();
        if (std::size_t(top.size()) != got.top.size()) return NAN;
        for (qsizetype k = 0; k < top.size(); ++k) {
            const analysis::Activation& a = got.top[std::size_t(k)];
            if (a.token != top[k]["token"].toInt() || a.dim != top[k]["dim"].toInt()) return NAN;
            worst = std::max(worst, std::abs(double(a.value) - top[k]["value"].toDouble()));
        }
        worst = std::max(worst, std::abs(got.median - expected[l]["median"].toDouble()));
    }
    return worst;
}

const analysis::SinkAblation& ablationNamed(const analysis::SinkReport& report, const char* id) {
    const auto found = std::find_if(report.ablations.begin(), report.ablations.end(),
                                    [&](const auto& a) { return a.id == id; });
    if (found == report.ablations.end()) qFatal("no %s ablation", id);
    return *found;
}
} // namespace

class TestSinkGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestSinkGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void sinksMatchTheReference_data() {
        QTest::addColumn<QJsonObject>("goldenCase");
        const QJsonArray cases = sinkGoldenCases();
        QCOMPARE(cases.size(), 2);
        for (const QJsonValue& c : cases)
            QTest::newRow(qPrintable(c["model"].toString())) << c.toObject();
    }

    void sinksMatchTheReference() {
        QFETCH(QJsonObject, goldenCase);
        const auto model =
            loadModel(HEADLIGHT_TEST_DATA "/models/" + goldenCase["model"].toString().toStdString(),
                      fixture_.backend());
        ModelInput input;
        for (const QJsonValue& id : goldenCase["ids"].toArray())
            input.ids.push_back(int32_t(id.toInt()));
        const analysis::SinkReport report =
            analysis::sinkReport(*model, input, {}, goldenCase["top"].toInt());
        QCOMPARE(report.ariseLayer, goldenCase["arise_layer"].toInt());
        const double activations = activationDiff(goldenCase["layers"].toArray(), report);
        const double shares = shareDiff(goldenCase["sink_share"], report.sinkShare);
        const analysis::SinkAblation& zero = ablationNamed(report, "zero-massive");
        const analysis::SinkAblation& drop = ablationNamed(report, "drop-first");
        const QJsonObject zeroGolden = goldenCase["zero_massive"].toObject();
        const QJsonObject dropGolden = goldenCase["drop_first"].toObject();
        const double kl = std::max(std::abs(zero.meanKl - zeroGolden["mean_kl"].toDouble()),
                                   std::abs(drop.meanKl - dropGolden["mean_kl"].toDouble()));
        const double dropShares = shareDiff(dropGolden["sink_share"], drop.sinkShare);
        qInfo("%s on %s: max |diff| activations %.3g, sink shares %.3g, KL %.3g, shares after "
              "drop-first %.3g",
              qPrintable(goldenCase["model"].toString()), fixture_.cliName(), activations, shares,
              kl, dropShares);
        QVERIFY(activations <= kSinkTolerance); // NaN (a token or dimension differs) fails
        QVERIFY(shares <= kSinkTolerance);
        QVERIFY(kl <= kSinkTolerance);
        QVERIFY(dropShares <= kSinkTolerance);
        QCOMPARE(zero.positions, zeroGolden["positions"].toInt());
        QCOMPARE(zero.top1Changes, zeroGolden["top1_changes"].toInt());
        QCOMPARE(drop.positions, dropGolden["positions"].toInt());
        QCOMPARE(drop.top1Changes, dropGolden["top1_changes"].toInt());
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestSinkGoldens)
#include "test_sink_goldens.moc"
