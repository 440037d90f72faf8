// `headlight figures realformer` as a user runs it, with no display and no XDG_RUNTIME_DIR: the
// six figures in every format, medians.csv checked against entropies recomputed here from the
// model's attention maps (own entropy, own median), nothing but progress on stderr, and a
// one-line error with a non-zero exit and no file for each kind of bad argument.
#include "backend/backend_factory.h"
#include "cli_runner.h"
#include "export/embedded_metadata.h"
#include "file_hashes.h"
#include "provenance.h"
#include "temp_files.h"
#include "text_input.h"
#include "zoo_models.h"

#include <QDir>
#include <QImage>
#include <QTest>
#include <algorithm>
#include <cmath>

using namespace headlight;
using test::runHeadlight;

namespace {

const QStringList kTexts = {"The hacker found the bug in the kernel.",
                            "A kludge is a clever but ugly fix.",
                            "RTFM: read the manual first, then ask."};

QString writeCorpus(const test::ScratchDir& dir) {
    const QString path = dir.filePath("corpus.txt");
    test::writeFile(path, (kTexts.join("\n\n") + "\n").toUtf8());
    return path;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Per (layer, head): the median over every query token of every text of −Σ_k p ln p.
std::vector<double> entropyMedians(const QString& folder) {
    auto backend = makeCpuBackend();
    const auto model = loadModel(folder.toStdString(), *backend);
    const auto tokenizer = tokenize::Tokenizer::load(folder.toStdString());
    const ModelSpec& spec = model->spec();
    std::vector<std::vector<double>> pooled(std::size_t(spec.layers * spec.heads));
    for (const QString& text : kTexts) {
        const Tensor a =
            model->forward(app::prepareText(tokenizer.get(), text).input).stackedProbabilities();
        const int64_t T = a.dim(2);
        const auto p = a.values();
        for (int64_t lh = 0; lh < spec.layers * spec.heads; ++lh)
            for (int64_t q = 0; q < T; ++q) {
                double h = 0.0;
                for (int64_t k = 0; k < T; ++k) {
                    const double v = p[std::size_t((lh * T + q) * T + k)];
                    if (v > 0.0) h -= v * std::log(v);
                }
                pooled[std::size_t(lh)].push_back(h);
            }
    }
    std::vector<double> medians;
    for (const auto& values : pooled)
        medians.push_back(median(values));
    return medians;
}

// The table's lines, less the leading "#" provenance lines.
QStringList csvLines(const QString& path) {
    return QString::fromUtf8(render::csvWithoutComments(test::readFile(path)))
        .split('\n', Qt::SkipEmptyParts);
}
} // namespace

class TestFiguresCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qunsetenv("DISPLAY");
        qunsetenv("WAYLAND_DISPLAY");
        qunsetenv("QT_QPA_PLATFORM");
        qunsetenv("XDG_RUNTIME_DIR");
    }

    void realformerFiguresOverACorpus() {
        test::ScratchDir dir;
        const QString out = dir.filePath("figures");
        const test::CliResult run =
            runHeadlight({"figures", "realformer", "--corpus", writeCorpus(dir), "--out", out,
                          "--models", test::zooModelsRoot(), "--format", "pdf", "--format", "svg",
                          "--format", "png", "--backend", "cpu"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        // Progress only: no Qt warning (XDG_RUNTIME_DIR is unset) and no error line.
        for (const QString& line : run.err.split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts))
            QVERIFY2(line.startsWith("headlight figures: ") && line.contains("texts"),
                     qPrintable(line));
        QVERIFY2(run.err.contains("realformer [##############################] 3/3 texts"),
                 qPrintable(run.err));
        QCOMPARE(QDir(out).entryList(QDir::Files).size(), 3 * 2 * 3 + 1);
        for (const QString model : {"post_ln", "pre_ln", "realformer"}) {
            const QByteArray svg = test::readFile(out + "/" + model + "-entropy.svg");
            QVERIFY(svg.contains(model.toUtf8() + ": Attention entropy per query token"));
            QVERIFY(svg.contains("3 texts from corpus.txt"));
            QVERIFY(svg.contains("Layer 3") && !svg.contains("Layer 4"));
            const QByteArray pdf = test::readFile(out + "/" + model + "-jsd.pdf");
            QVERIFY(pdf.startsWith("%PDF-"));
            QCOMPARE(pdf.count("/Type /Page\n") + pdf.count("/Type /Page\r"), 1);
            QCOMPARE(QImage(out + "/" + model + "-jsd.png").size(), QSize(1600, 1100));
        }
        // 3 models × (4 layers × 4 heads of entropy + 3 layer pairs × 4 heads of JSD).
        const QStringList lines = csvLines(out + "/medians.csv");
        QCOMPARE(lines.first(), QString("model,measure,layer,head,q1,median,q3,values,texts"));
        QCOMPARE(lines.size(), 1 + 3 * (16 + 12));
        QVERIFY(run.out.contains("wrote 19 files"));
    }

    // Every file carries what `headlight export` writes into its files, with the whole figure set's
    // command and model files, and `headlight reproduce` reruns it and finds the file identical.
    void everyFileCarriesItsProvenanceAndReproduces() {
        test::ScratchDir dir;
        const QString out = dir.filePath("figures");
        const QString corpus = writeCorpus(dir);
        QVERIFY(runHeadlight({"figures", "realformer", "--corpus", corpus, "--out", out, "--models",
                              test::zooModelsRoot(), "--format", "pdf", "--format", "svg",
                              "--format", "png", "--dpi", "60"})
                    .exitCode == 0);
        const QString weights = test::zooModelsRoot() + "/pre_ln/model.safetensors";
        for (const QString file :
             {"pre_ln-jsd.png", "pre_ln-jsd.svg", "pre_ln-jsd.pdf", "medians.csv"}) {
            const std::optional<app::Provenance> p = app::readProvenance(out + "/" + file);
            QVERIFY2(p.has_value(), qPrintable(file));
            QCOMPARE(p->command.mid(0, 4), QStringList({"figures", "realformer", "--corpus",
                                                        QFileInfo(corpus).absoluteFilePath()}));
            QVERIFY(p->command.contains("--backend") && p->backend == "cpu");
            QCOMPARE(p->corpus->sha256, app::fileSha256(corpus));
            QCOMPARE(p->files.weights.at("pre_ln/model.safetensors"), app::fileSha256(weights));
            QCOMPARE(p->files.weights.size(), std::size_t(3));
            QCOMPARE(p->modelName,
                     QString(file == "medians.csv" ? "post_ln, pre_ln, realformer" : "pre_ln"));
            QCOMPARE(p->dataSha256.isEmpty(), file == "medians.csv");
            QCOMPARE(p->version, QString(HEADLIGHT_VERSION));
        }
        for (const QString file : {"pre_ln-jsd.svg", "pre_ln-jsd.pdf"}) {
            const test::CliResult again = runHeadlight({"reproduce", out + "/" + file});
            QVERIFY2(again.exitCode == 0, qPrintable(again.err));
            QVERIFY2(again.out.endsWith("identical: " + out + "/" + file + "\n"),
                     qPrintable(again.out));
        }
        // A changed weights file is named, not silently rerun.
        const QString copy = dir.filePath("zoo");
        for (const QString model : {"post_ln", "pre_ln", "realformer"}) {
            QDir().mkpath(copy + "/" + model);
            for (const QString& f :
                 QDir(test::zooModelsRoot() + "/" + model).entryList(QDir::Files))
                QFile::copy(test::zooModelsRoot() + "/" + model + "/" + f,
                            copy + "/" + model + "/" + f);
        }
        const QString moved = dir.filePath("moved");
        QVERIFY(runHeadlight({"figures", "realformer", "--corpus", corpus, "--out", moved,
                              "--models", copy, "--format", "png", "--dpi", "30"})
                    .exitCode == 0);
        test::writeFile(copy + "/realformer/config.json",
                        test::readFile(copy + "/realformer/config.json") + " ");
        const test::CliResult refused = runHeadlight({"reproduce", moved + "/post_ln-jsd.png"});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(test::refusalReason(refused, "reproduce")
                     .contains("the model changed: " + copy + "/realformer/config.json"),
                 qPrintable(refused.err));
    }

    void entropyMediansMatchARecomputation() {
        test::ScratchDir dir;
        const QString out = dir.filePath("figures");
        QVERIFY(runHeadlight({"figures", "realformer", "--corpus", writeCorpus(dir), "--out", out,
                              "--models", test::zooModelsRoot(), "--format", "svg"})
                    .exitCode == 0);
        const std::vector<double> expected = entropyMedians(test::zooModelsRoot() + "/realformer");
        int checked = 0;
        for (const QString& line : csvLines(out + "/medians.csv")) {
            const QStringList f = line.split(',');
            if (f[0] != "realformer" || f[1] != "entropy") continue;
            const std::size_t lh = std::size_t(f[2].toInt() * 4 + f[3].toInt());
            QVERIFY2(std::abs(f[5].toDouble() - expected[lh]) < 1e-4, qPrintable(line));
            ++checked;
        }
        QCOMPARE(checked, 16);
    }

    void badArgumentsGetOneLineAndNoFiles() {
        test::ScratchDir dir;
        const QString corpus = writeCorpus(dir);
        const QString empty = dir.filePath("empty.txt");
        test::writeFile(empty, "\n  \n");
        const QString out = dir.filePath("never");
        const QString models = test::zooModelsRoot();
        const QList<std::pair<QStringList, QString>> cases = {
            {{"figures"}, "give the figure set: realformer"},
            {{"figures", "bertology", "--corpus", corpus}, "unknown figure set 'bertology'"},
            {{"figures", "realformer", "--out", out}, "--corpus is required"},
            {{"figures", "realformer", "--corpus", corpus}, "--out is required"},
            {{"figures", "realformer", "--corpus", empty, "--out", out, "--models", models},
             "holds no text (one text per line)"},
            {{"figures", "realformer", "--corpus", dir.filePath("absent.txt"), "--out", out,
              "--models", models},
             "cannot read --corpus"},
            {{"figures", "realformer", "--corpus", corpus, "--out", out, "--models", dir.path()},
             "the zoo model 'post_ln' is not in " + QDir(dir.path()).absolutePath()},
            {{"figures", "realformer", "--corpus", corpus, "--out", out, "--format", "gif"},
             "--format must be pdf, svg or png; not 'gif'"},
        };
        for (const auto& [args, message] : cases) {
            const test::CliResult run = runHeadlight(args);
            QCOMPARE(run.exitCode, 1);
            const QString reason = test::refusalReason(run, "figures");
            QVERIFY2(reason.startsWith("headlight figures: ") && !reason.contains('\n'),
                     qPrintable(run.err));
            QVERIFY2(reason.contains(message), qPrintable(run.err + " ≠ " + message));
        }
        QVERIFY(!QFileInfo::exists(out));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestFiguresCli)
#include "test_figures_cli.moc"
