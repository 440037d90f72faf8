// Real-size checkpoints without real data: Llama-3.1-8B- and Llama-3.2-1B-shaped BF16
// checkpoints whose shards are a safetensors header and a hole (support/sparse_llama.h), sharded
// with model.safetensors.index.json. `headlight info` reads only the headers:
// its memory plan for the 8B (parameters, bytes mapped, peak for T tokens, whether it fits) is
// checked against the same numbers worked out here from the config. The 1B runs a 16-token pass
// on the CLI with its weights left in the mapped shards: all-zero weights make every hidden
// state zero and every attention row uniform over the keys a causal query sees.
#include "cli_runner.h"
#include "io/safetensors.h"
#include "sparse_llama.h"
#include "temp_files.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>

using namespace headlight;

namespace {

using test::kLlama1B;
using test::kLlama8B;
using test::LlamaShape;

// Sets an environment variable for the CLI runs of one test.
class ScopedVariable {
public:
    ScopedVariable(const char* name, const QByteArray& value)
        : name_(name) {
        qputenv(name, value);
    }
    ~ScopedVariable() { qunsetenv(name_); }

private:
    const char* name_;
};

QJsonObject infoJson(const QString& folder, int tokens) {
    const test::CliResult run = test::runHeadlight(
        {"info", "--model", folder, "--tokens", QString::number(tokens), "--json"});
    if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}
} // namespace

class TestMemoryPlan : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;

private Q_SLOTS:
    // The plan for a CPU pass with the default capture (every layer's probabilities): the BF16
    // matrices mapped, the norms widened and held twice while loading, and the pass: captured
    // maps in the backend and the trace plus one download copy, the last hidden state, and one
    // layer's working set (five [T, D] states, q k v and the context, the MLP's two [T, F]
    // projections, and one [T, T] score matrix per attention thread).
    void planOfAn8BCheckpointFits24GB() {
        const LlamaShape s = kLlama8B;
        const QString folder = test::writeSparseLlama(scratch_, s, 4);
        const ScopedVariable limit("HEADLIGHT_MEMORY_LIMIT_MB", "24000");
        const int64_t t = 512;
        const QJsonObject plan = infoJson(folder, int(t));

        double matrices = 0.0, norms = 0.0;
        for (const auto& [name, shape] : test::llamaTensors(s))
            (shape.size() == 2 ? matrices : norms) += double(test::elementsOf(shape));
        QCOMPARE(matrices + norms, 8'030'261'248.0); // Llama-3.1-8B's published count
        QCOMPARE(plan["parameters"].toDouble(), matrices + norms);
        QCOMPARE(plan["mapped_bytes"].toDouble(), 2.0 * matrices);
        QCOMPARE(plan["widened_bytes"].toDouble(), 2.0 * 4.0 * norms);

        const double T = double(t), d = double(s.hidden), h = double(s.heads);
        const double square = T * T * 4.0;
        const double capture = double(s.layers) * (h + h) * square + h * square;
        // One block of 256 query rows' scores [256, T] per thread, not a [T, T] map.
        const double threads = double(QThread::idealThreadCount());
        const double working =
            5.0 * T * d * 4.0 +
            T * (2.0 * h * double(s.headDim()) + 2.0 * double(s.kvHeads * s.headDim())) * 4.0 +
            2.0 * T * double(s.intermediate) * 4.0 + threads * std::min(T, 256.0) * T * 4.0;
        const double pass = capture + T * d * 4.0 + working;
        QCOMPARE(plan["pass_bytes"].toDouble(), pass);
        QCOMPARE(plan["peak_bytes"].toDouble(), 2.0 * matrices + 2.0 * 4.0 * norms + pass);
        QCOMPARE(plan["available_bytes"].toDouble(), 24e9);
        QVERIFY(plan["peak_bytes"].toDouble() < 24e9);
        QCOMPARE(plan["fits"].toBool(), true);

        const ScopedVariable smaller("HEADLIGHT_MEMORY_LIMIT_MB", "16000");
        QCOMPARE(infoJson(folder, int(t))["fits"].toBool(), false);
    }

    void textPlanSaysWhetherItFits() {
        const QString folder = test::writeSparseLlama(scratch_, kLlama8B, 2);
        const ScopedVariable limit("HEADLIGHT_MEMORY_LIMIT_MB", "24000");
        const test::CliResult run = test::runHeadlight({"info", "--model", folder});
        QCOMPARE(run.exitCode, 0);
        QVERIFY2(run.out.contains("mapped:       16.1 GB\n"), qPrintable(run.out));
        QVERIFY2(run.out.contains("available:    24.0 GB\nfits:         yes\n"),
                 qPrintable(run.out));
    }

    void a1BCheckpointRunsFromItsMappedShards() {
        const LlamaShape s = kLlama1B;
        const QString folder = test::writeSparseLlama(scratch_, s, 2);
        const QString dump = scratch_.freshPath();
        QStringList ids;
        for (int i = 0; i < 16; ++i)
            ids << QString::number(1000 + 37 * i);
        const test::CliResult run =
            test::runHeadlight({"inspect", "--model", folder, "--backend", "cpu", "--ids",
                                ids.join(","), "--dump", dump},
                               300000);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));

        const io::SafetensorsFile out(dump.toStdString());
        const Tensor attentions = out.loadF32("attentions");
        QCOMPARE(attentions.shape(), (std::vector<int64_t>{s.layers, s.heads, 16, 16}));
        for (int64_t block = 0; block < s.layers * s.heads; ++block)
            for (int64_t i = 0; i < 16; ++i)
                for (int64_t j = 0; j < 16; ++j) {
                    const float expected = j <= i ? 1.0f / float(i + 1) : 0.0f;
                    QVERIFY(std::abs(attentions.values()[std::size_t((block * 16 + i) * 16 + j)] -
                                     expected) <= 1e-6f);
                }
        const Tensor last = out.loadF32("last_hidden_state");
        QCOMPARE(last.shape(), (std::vector<int64_t>{16, s.hidden}));
        for (float v : last.values())
            QCOMPARE(v, 0.0f);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestMemoryPlan)
#include "test_memory_plan.moc"
