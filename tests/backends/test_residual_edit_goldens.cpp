// Edits of the residual stream inside the pass (variants::ResidualEdit) on each backend against
// tools/golden/make_steering_goldens.py (float64 PyTorch hooks written from SAELens's
// HookedSAETransformer and llama.cpp's control vectors, on the torch modules of the golden
// GPT-2 and Qwen2): SAE features zeroed and clamped with and without the error term, steered by
// a decoder row, the reconstruction spliced alone, at hook_resid_pre and hook_resid_post (the
// last block's before the final norm); a difference-of-means steering vector; a llama.cpp GGUF
// control vector. The final normed states and the last position's logits agree within 1e-4.
#include "analysis/sae_edit.h"
#include "analysis/steering_vector.h"
#include "backend_fixture.h"
#include "compare.h"
#include "golden_json.h"
#include "io/gguf.h"
#include "io/sae_folder.h"
#include "io/safetensors.h"
#include "io/steering_vector_file.h"
#include "model/transformer.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace headlight;

namespace {

constexpr double kEditTolerance = 1e-4;
const QString kSteeringData = QStringLiteral(HEADLIGHT_TEST_DATA "/steering/");

QJsonObject editGoldenJson() {
    return test::readJsonObject(kSteeringData + "golden.json");
}

std::vector<int32_t> editGoldenIds(const QJsonValue& ids) {
    return test::idsOf(ids);
}

std::vector<analysis::FeatureValue> editFeatureValues(const QJsonValue& pairs) {
    std::vector<analysis::FeatureValue> out;
    for (const QJsonValue& pair : pairs.toArray())
        out.push_back({pair[0].toInt(), float(pair[1].toDouble())});
    return out;
}

std::unique_ptr<TransformerModel> editGoldenModel(const QJsonValue& name, Backend& backend) {
    return loadModel(HEADLIGHT_TEST_DATA "/models/" + name.toString().toStdString(), backend);
}

// The final normed states and the last position's logits of `ids` with `edits`, against the
// case's file; returns the larger max |diff|.
double compareEditWithGolden(const TransformerModel& model, const std::vector<int32_t>& ids,
                             std::vector<variants::ResidualEdit> edits, const QString& name) {
    variants::Intervention intervention;
    intervention.edits = std::move(edits);
    CaptureRequest capture;
    capture.probabilities = false;
    capture.logits = true;
    const Trace trace = model.forward(ModelInput{ids, {}, {}}, capture, {}, intervention);
    const io::SafetensorsFile expected((kSteeringData + name + ".safetensors").toStdString());
    QString where;
    const double states =
        test::maxAbsDiff(trace.lastHiddenState, expected.loadF32("last_hidden_state"), &where);
    if (states > kEditTolerance) qWarning("%s: states %s", qPrintable(name), qPrintable(where));
    const int64_t vocab = trace.logits.dim(1);
    const float* last = trace.logits.data() + (trace.logits.dim(0) - 1) * vocab;
    const Tensor lastLogits({vocab}, std::vector<float>(last, last + vocab));
    const double logits = test::maxAbsDiff(lastLogits, expected.loadF32("last_logits"), &where);
    if (logits > kEditTolerance) qWarning("%s: logits %s", qPrintable(name), qPrintable(where));
    return std::max(states, logits);
}
} // namespace

class TestResidualEditGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestResidualEditGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void saeEditsMatchTheReference_data() {
        QTest::addColumn<QJsonObject>("goldenCase");
        const QJsonArray cases = editGoldenJson()["sae_cases"].toArray();
        QCOMPARE(cases.size(), 5);
        for (const QJsonValue& c : cases)
            QTest::newRow(qPrintable(c["name"].toString())) << c.toObject();
    }

    void saeEditsMatchTheReference() {
        QFETCH(QJsonObject, goldenCase);
        const auto model = editGoldenModel(goldenCase["model"], fixture_.backend());
        io::SaeFolder folder = io::readSaeFolder(HEADLIGHT_TEST_DATA "/sae/" +
                                                 goldenCase["sae"].toString().toStdString());
        analysis::SaeFeatureEdits edits;
        edits.clamps = editFeatureValues(goldenCase["clamp"]);
        edits.steers = editFeatureValues(goldenCase["steer"]);
        edits.splice = analysis::saeSpliceFromName(goldenCase["splice"].toString().toStdString());
        const analysis::SaeHook hook =
            analysis::parseSaeHook(folder.config.hookName, model->spec().layers);
        const double diff = compareEditWithGolden(
            *model, editGoldenIds(goldenCase["ids"]),
            {analysis::saeResidualEdit(
                std::make_shared<const analysis::SparseAutoencoder>(std::move(folder.sae)), edits,
                hook, folder.config.hookName)},
            goldenCase["name"].toString());
        qInfo("%s on %s: max |diff| %.3g", qPrintable(goldenCase["name"].toString()),
              fixture_.cliName(), diff);
        QVERIFY(diff <= kEditTolerance);
    }

    void steeringVectorMatchesTheReference() {
        const QJsonObject c = editGoldenJson()["vector_case"].toObject();
        const auto model = editGoldenModel(c["model"], fixture_.backend());
        const int layers = model->spec().layers;
        const analysis::SaeHook hook =
            analysis::parseSaeHook(c["hook"].toString().toStdString(), layers);
        const auto activations = [&](const QJsonValue& set) {
            std::vector<Tensor> out;
            for (const QJsonValue& ids : set.toArray())
                out.push_back(analysis::activationsAtHook(
                    model->forward(ModelInput{editGoldenIds(ids), {}, {}},
                                   analysis::captureForHook(hook, layers)),
                    hook, layers));
            return out;
        };
        const Tensor vector =
            analysis::differenceOfMeans(activations(c["positive"]), activations(c["negative"]));
        const io::SafetensorsFile expected(
            (kSteeringData + c["name"].toString() + ".safetensors").toStdString());
        const double vectorDiff = test::maxAbsDiff(vector, expected.loadF32("vector"));
        QVERIFY(vectorDiff <= kEditTolerance);
        const double diff = compareEditWithGolden(
            *model, editGoldenIds(c["ids"]),
            {analysis::steeringEdit(vector, float(c["strength"].toDouble()),
                                    analysis::residualStreamOfHook(hook), "the steering vector")},
            c["name"].toString());
        qInfo("steering vector on %s: max |diff| vector %.3g, pass %.3g", fixture_.cliName(),
              vectorDiff, diff);
        QVERIFY(diff <= kEditTolerance);
    }

    void controlVectorMatchesTheReference() {
        const QJsonObject c = editGoldenJson()["control_case"].toObject();
        const auto model = editGoldenModel(c["model"], fixture_.backend());
        const std::string path = (kSteeringData + c["file"].toString()).toStdString();
        std::vector<variants::ResidualEdit> edits;
        std::vector<int> blocks;
        for (const io::ControlDirection& d :
             io::controlVectorDirections(io::readGguf(path), path)) {
            blocks.push_back(d.block);
            edits.push_back(analysis::steeringEdit(d.direction, float(c["strength"].toDouble()),
                                                   d.block + 1, "direction"));
        }
        QCOMPARE(blocks, (std::vector<int>{1, 2}));
        const double diff = compareEditWithGolden(*model, editGoldenIds(c["ids"]), std::move(edits),
                                                  c["name"].toString());
        qInfo("control vector on %s: max |diff| %.3g", fixture_.cliName(), diff);
        QVERIFY(diff <= kEditTolerance);
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestResidualEditGoldens)
#include "test_residual_edit_goldens.moc"
