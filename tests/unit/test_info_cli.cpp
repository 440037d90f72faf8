// `headlight info` on the golden checkpoints: the family, sizes, positions, norms, stored dtype
// and parameter count it reports, against what tools/golden/checkpoints.py wrote (counted here
// from the sizes), and the one-line refusal of a model_type Headlight does not know, listing
// the supported ones.
#include "cli_runner.h"
#include "golden.h"
#include "temp_files.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace headlight;

namespace {

// The "key: value" lines of `headlight info`, as a map.
QMap<QString, QString> infoFields(const QString& folder) {
    const test::CliResult run = test::runHeadlight({"info", "--model", folder});
    if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
    QMap<QString, QString> fields;
    for (const QString& line : run.out.split('\n', Qt::SkipEmptyParts)) {
        const qsizetype colon = line.indexOf(':');
        fields.insert(line.left(colon), line.mid(colon + 1).trimmed());
    }
    return fields;
}

// Qwen3's stored tensors, from its sizes: embeddings, per layer two norms, q/k/v/o, q/k norms
// and the SwiGLU MLP, the final norm (tied head: not stored).
qint64 qwen3Parameters(qint64 vocab, qint64 d, qint64 layers, qint64 heads, qint64 kvHeads,
                       qint64 headDim, qint64 inner) {
    const qint64 attention = d * heads * headDim * 2 + d * kvHeads * headDim * 2 + 2 * headDim;
    return vocab * d + layers * (2 * d + attention + 3 * d * inner) + d;
}
} // namespace

class TestInfoCli : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;

private Q_SLOTS:
    void describesQwen3() {
        const auto fields = infoFields(test::goldenRoot() + "/qwen3");
        QCOMPARE(fields["model_type"], QString("qwen3"));
        QCOMPARE(fields["family"], QString("Qwen3"));
        QCOMPARE(fields["layers"], QString("2"));
        QCOMPARE(fields["heads"], QString("4"));
        QCOMPARE(fields["kv_heads"], QString("2"));
        QCOMPARE(fields["head_dim"], QString("16"));
        QCOMPARE(fields["hidden"], QString("32"));
        QCOMPARE(fields["vocab"], QString("704"));
        QCOMPARE(fields["causal"], QString("yes"));
        QCOMPARE(fields["positions"], QString("rotary (theta 1000000)"));
        QCOMPARE(fields["norms"],
                 QString("RMSNorm before each sub-layer, per-head RMSNorm of q and k, eps 1e-06"));
        QCOMPARE(fields["dtype"], QString("F32"));
        QCOMPARE(fields["parameters"], QString::number(qwen3Parameters(704, 32, 2, 4, 2, 16, 64)));
    }

    void describesOptWiringAndPositions() {
        const auto pre = infoFields(test::goldenRoot() + "/opt");
        QCOMPARE(pre["family"], QString("OPT"));
        QCOMPARE(pre["positions"], QString("learned, 514 rows, ids start at 2"));
        QCOMPARE(pre["norms"], QString("LayerNorm before each sub-layer, eps 1e-05"));
        const auto post = infoFields(test::goldenRoot() + "/opt_post_ln");
        QCOMPARE(post["norms"], QString("LayerNorm after each sub-layer, eps 1e-05"));
    }

    void describesStoredDtypeAndFamilyAsJson() {
        const test::CliResult run =
            test::runHeadlight({"info", "--model", test::goldenRoot() + "/bert_mlm", "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject json = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(json["family"].toString(), QString("BERT"));
        QCOMPARE(json["model_type"].toString(), QString("bert"));
        QCOMPARE(json["dtype"].toString(), QString("F16"));
        QCOMPARE(json["layers"].toInt(), 3);
        QCOMPARE(json["positions"].toString(), QString("learned, 512 rows"));
    }

    void unknownModelTypeListsTheSupportedOnes() {
        const QString folder = scratch_.filePath("mamba");
        QVERIFY(QDir().mkpath(folder));
        test::writeFile(folder + "/config.json", R"({"model_type": "mamba", "hidden_size": 32})");
        const test::CliResult run = test::runHeadlight({"info", "--model", folder});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err, "headlight info: " + folder +
                              "/config.json: unsupported architecture 'mamba' (supported: bert, "
                              "roberta, distilbert, gpt2, llama, qwen2, mistral, qwen3, opt, "
                              "gemma2, gemma3_text, headlight)\n");
    }

    void missingModelIsAUsageError() {
        const test::CliResult run = test::runHeadlight({"info"});
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(test::refusalReason(run, "info"), QString("headlight info: --model is required"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestInfoCli)
#include "test_info_cli.moc"
