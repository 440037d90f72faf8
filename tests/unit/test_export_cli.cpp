// `headlight export` as a user runs it, with no display (DISPLAY, WAYLAND_DISPLAY and
// QT_QPA_PLATFORM unset: the command picks the offscreen platform itself): --list-views, every
// view it lists in PNG, SVG and PDF on the tiny BERT, a corpus of texts for the violins, CSV and
// safetensors data, a variant spec, and a one-line error with a non-zero exit and no file for
// each kind of bad argument.
#include "cli_runner.h"
#include "export/embedded_metadata.h"
#include "golden.h"
#include "run_folder_fixture.h"
#include "temp_files.h"

#include <QDir>
#include <QImage>
#include <QTest>

using namespace headlight;
using test::runHeadlight;

namespace {

QString bert() {
    return test::goldenRoot() + "/bert";
}

QStringList viewNames() {
    const test::CliResult listed = runHeadlight({"export", "--list-views"});
    QStringList names;
    for (const QString& line : listed.out.split('\n', Qt::SkipEmptyParts))
        names << line.section(' ', 0, 0);
    return names;
}

QStringList exportArgs(const QString& view, const QString& out) {
    return {"export", "--model", bert(),  "--text", "The cat sat on the mat.",
            "--view", view,      "--out", out};
}
} // namespace

class TestExportCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qunsetenv("DISPLAY");
        qunsetenv("WAYLAND_DISPLAY");
        qunsetenv("QT_QPA_PLATFORM");
    }

    void listViewsNamesEveryViewWithADescription() {
        const test::CliResult listed = runHeadlight({"export", "--list-views"});
        QCOMPARE(listed.exitCode, 0);
        const QStringList lines = listed.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 25); // the 24 views of the table and the atlas
        for (const char* name : {"heatmap",           "model-grid",
                                 "token-lines",       "entropy-violins",
                                 "jsd-violins",       "head-jsd-matrix",
                                 "rollout",           "difference",
                                 "sparsity",          "positions",
                                 "early-exit",        "lsh-buckets",
                                 "moe-routing",       "act-ponder",
                                 "logit-lens",        "variant-effect",
                                 "knn-neighbours",    "qk-embedding",
                                 "qk-embedding-grid", "head-roles",
                                 "training",          "atlas"})
            QVERIFY2(viewNames().contains(name), name);
        QVERIFY(viewNames().contains("sinks")); // the list above is one column layout full
        QVERIFY(viewNames().contains("features"));
        QVERIFY(viewNames().contains("circuits"));
        for (const QString& line : lines)
            QVERIFY2(line.section(' ', 1).trimmed().size() > 10, qPrintable(line));
    }

    // The panel views of a variant's internals get the variant that has them, the routing and
    // pondering views a zoo-format checkpoint that has experts or ACT, the LM-head views the
    // tiny BERT with its masked-LM head (and the effect a variant); the others run the tiny
    // BERT as it is.
    void everyViewExportsInEveryFormat() {
        test::ScratchDir dir;
        const QString lsh = dir.filePath("lsh.json"), exit = dir.filePath("exit.json");
        const QString window = dir.filePath("window.json");
        const QString run =
            test::makeRunFolder(dir.filePath("run"), {{0, "copy"}, {100, "rope"}}, "abcabc");
        test::writeFile(lsh, R"({"attention": {"kernel": "lsh", "buckets": 4}})");
        test::writeFile(exit, R"({"early_exit": {"criterion": "saturation", "threshold": 0.5}})");
        test::writeFile(window, R"({"mask": {"preset": "longformer", "window": 1}})");
        const QMap<QString, QString> variantOf{
            {"lsh-buckets", lsh},
            {"early-exit", exit},
            {"variant-effect", window},
            {"knn-neighbours", QStringLiteral(HEADLIGHT_TEST_DATA "/knn/spec.json")}};
        for (const QString& view : viewNames())
            for (const QString suffix : {".png", ".svg", ".pdf"}) {
                const QString out = dir.filePath(view + suffix);
                QStringList args = exportArgs(view, out);
                if (view == "logit-lens" || view == "variant-effect")
                    args[2] = test::goldenRoot() + "/bert_mlm";
                if (view == "knn-neighbours") args[2] = test::goldenRoot() + "/gpt2";
                if (variantOf.contains(view)) args << "--variant" << variantOf[view];
                // The lines over training are drawn from a run's checkpoints.
                if (view == "training")
                    args = {"export", "--checkpoints", run, "--view", view, "--out", out};
                // The features view reads an SAE: the zoo's, on the model it was trained on.
                if (view == "features")
                    args = {"export",
                            "--model",
                            QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/pre_ln"),
                            "--text",
                            "In 1984 the bug was 42.",
                            "--view",
                            view,
                            "--sae",
                            QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/saes/pre_ln"),
                            "--out",
                            out};
                if (view == "moe-routing" || view == "act-ponder")
                    args = {"export",
                            "--model",
                            QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/") +
                                (view == "moe-routing" ? "moe_top_k2" : "act_ut_post"),
                            "--text",
                            "1 5 9 13 17 21",
                            "--view",
                            view,
                            "--out",
                            out};
                const test::CliResult run = runHeadlight(args);
                QVERIFY2(run.exitCode == 0, qPrintable(view + suffix + ": " + run.err));
                const QByteArray bytes = test::readFile(out);
                if (suffix == ".png") {
                    // Default page 8 × 5.5 inches at the default 200 dpi.
                    QCOMPARE(QImage::fromData(bytes, "PNG").size(), QSize(1600, 1100));
                } else if (suffix == ".svg") {
                    QVERIFY(bytes.contains("<text") && bytes.contains("Model: "));
                    QVERIFY(bytes.contains(args[2].section('/', -1).toUtf8()));
                } else {
                    QVERIFY(bytes.startsWith("%PDF-"));
                }
            }
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), viewNames().size() * 3 + 3);
    }

    // The LM-head views name what is missing: a checkpoint without a head, or no variant to
    // compare against exact attention.
    void lmHeadViewsSayWhatIsMissing() {
        test::ScratchDir dir;
        const QString out = dir.filePath("lens.png");
        test::CliResult run = runHeadlight(exportArgs("logit-lens", out));
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err.trimmed(),
                 QString("headlight export: nothing to export: this checkpoint has no masked-LM "
                         "head (cls.predictions.*): it is a base model, not BertForMaskedLM"));
        QStringList args = exportArgs("variant-effect", out);
        args[2] = test::goldenRoot() + "/gpt2";
        run = runHeadlight(args);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("This pass runs exact attention with no knockout or edit. Toggle a variant"),
                 qPrintable(run.err));
        QVERIFY(!QFileInfo::exists(out));
        // The lens's numbers as CSV: one row per panel cell, the top token's probability in [0, 1].
        const QString csv = dir.filePath("lens.csv");
        args = exportArgs("logit-lens", csv);
        args[2] = test::goldenRoot() + "/gpt2";
        run = runHeadlight(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QStringList rows = QString::fromUtf8(test::readFile(csv))
                                     .split('\n', Qt::SkipEmptyParts)
                                     .filter(QStringLiteral("Top token of the lens"));
        QVERIFY(!rows.isEmpty());
        for (const QString& row : rows) {
            const double p = row.section(',', -1).toDouble();
            QVERIFY2(p > 0.0 && p <= 1.0, qPrintable(row));
        }
    }

    void dpiSizeLayerAndHeadAreHonoured() {
        test::ScratchDir dir;
        const QString out = dir.filePath("h.png");
        QStringList args = exportArgs("heatmap", out);
        args << "--layer"
             << "1"
             << "--head"
             << "3"
             << "--dpi"
             << "50"
             << "--size"
             << "4x3";
        const test::CliResult run = runHeadlight(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QCOMPARE(QImage(out).size(), QSize(200, 150));
        const QString svg = dir.filePath("h.svg");
        args = exportArgs("heatmap", svg);
        args << "--layer"
             << "1"
             << "--head"
             << "3";
        QVERIFY(runHeadlight(args).exitCode == 0);
        QVERIFY(test::readFile(svg).contains("Layer 1 · head 3"));
    }

    void aCorpusPoolsTheViolins() {
        test::ScratchDir dir;
        const QString texts = dir.filePath("corpus.txt");
        test::writeFile(texts, "The cat sat.\n\nA dog ran far away.\nBirds sing in the morning.\n");
        const QString out = dir.filePath("violins.svg");
        const test::CliResult run = runHeadlight({"export", "--model", bert(), "--texts", texts,
                                                  "--view", "entropy-violins", "--out", out});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.err.contains("3/3 texts"), qPrintable(run.err));
        const QByteArray svg = test::readFile(out);
        QVERIFY(svg.contains("over 3 texts"));
        QVERIFY(svg.contains("3 texts from corpus.txt"));
        const QString csv = dir.filePath("jsd.csv");
        QVERIFY(runHeadlight({"export", "--model", bert(), "--texts", texts, "--view",
                              "jsd-violins", "--out", csv})
                    .exitCode == 0);
        // 1 layer pair × 4 heads under a header, after the provenance comments.
        QCOMPARE(render::csvWithoutComments(test::readFile(csv)).count('\n'), 5);
    }

    void dataExportsFromTheCommandLine() {
        test::ScratchDir dir;
        const QString csv = dir.filePath("entropy.csv");
        QVERIFY(runHeadlight(exportArgs("entropy-violins", csv)).exitCode == 0);
        const QList<QByteArray> lines = render::csvWithoutComments(test::readFile(csv)).split('\n');
        QCOMPARE(lines.first(), QByteArray("panel,layer,head,q1,median,q3,band"));
        QCOMPARE(lines.size(), 1 + 2 * 4 + 1); // 2 layers × 4 heads, then the empty tail
        const QString tensors = dir.filePath("grid.safetensors");
        QVERIFY(runHeadlight(exportArgs("model-grid", tensors)).exitCode == 0);
        QVERIFY(test::readFile(tensors).contains("\"attention\""));
    }

    void aVariantIsRunAndNamed() {
        test::ScratchDir dir;
        const QString spec = dir.filePath("local_window.json");
        test::writeFile(spec, R"({"mask": {"preset": "longformer", "window": 1, "dilation": 1,
                                          "global": [0]}})");
        const QString out = dir.filePath("v.svg");
        QStringList args = exportArgs("heatmap", out);
        args << "--variant" << spec;
        const test::CliResult run = runHeadlight(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(test::readFile(out).contains("Variant: local_window"));
    }

    void badArgumentsGiveOneLineAndNoFile() {
        test::ScratchDir dir;
        const QString out = dir.filePath("f.png");
        const QString texts = dir.filePath("t.txt");
        test::writeFile(texts, "one\n");
        const struct {
            QStringList args;
            QString message;
        } cases[] = {
            {exportArgs("sunburst", out), "unknown view 'sunburst'"},
            {exportArgs("heatmap", out) << "--layer"
                                        << "2",
             "--layer 2 is out of range"},
            {exportArgs("heatmap", out) << "--head"
                                        << "4",
             "--head 4 is out of range"},
            {exportArgs("heatmap", dir.filePath("no/such/f.png")), "does not exist"},
            {exportArgs("heatmap", dir.filePath("f.gif")), "unknown extension '.gif'"},
            {exportArgs("heatmap", dir.filePath("f")), "--out has no extension"},
            {exportArgs("heatmap", out) << "--dpi"
                                        << "0",
             "--dpi must be an integer"},
            {exportArgs("heatmap", out) << "--size"
                                        << "big",
             "--size must be"},
            {exportArgs("heatmap", out) << "--texts" << texts,
             "exactly one of --text, --text-file and --texts"},
            {{"export", "--model", bert(), "--texts", texts, "--view", "heatmap", "--out", out},
             "--texts pools a corpus"},
            {{"export", "--model", bert(), "--text", "x", "--out", out}, "--view is required"},
            {exportArgs("heatmap", out) << "--colour", "unknown argument '--colour'"},
            {exportArgs("lsh-buckets", out), "nothing to export: This pass has no LSH buckets"},
        };
        for (const auto& c : cases) {
            const test::CliResult run = runHeadlight(c.args);
            QVERIFY2(run.exitCode != 0, qPrintable(c.message));
            const QString reason = test::refusalReason(run, "export");
            QVERIFY2(reason.startsWith("headlight export: ") && reason.contains(c.message) &&
                         !reason.contains('\n'),
                     qPrintable(c.message + " <- " + run.err));
        }
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
                 QStringList{"t.txt"});
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestExportCli)
#include "test_export_cli.moc"
