// `headlight figures variant-effect` as a user runs it: GPT-2 and Llama golden checkpoints, a
// corpus of three texts and two variants (a Longformer window, and learned positions, which Llama
// has no table for), written as variant-effect.csv and a figure in each format, with progress on
// stderr. The CSV's mean KL and top-1 agreement match a recomputation here from the two passes'
// logits (KL in double over softmax, pooled over every position of every text); the refused
// variant is a row with its reason; bad arguments get one line and a non-zero exit.
#include "backend/backend_factory.h"
#include "cli_runner.h"
#include "golden.h"
#include "temp_files.h"
#include "text_input.h"
#include "variants/variant_spec.h"

#include <QDir>
#include <QImage>
#include <QTest>
#include <cmath>

using namespace headlight;
using test::runHeadlight;

namespace {

const QStringList kEffectTexts = {"Hello, world! It is a test.", "The cat sat on the mat.",
                                  "Once upon a time there was a kernel."};
const char* kWindow = R"({"mask": {"preset": "longformer", "window": 1}})";

struct Pooled {
    double kl = 0.0, agree = 0.0;
    int positions = 0;
};

// KL(p ‖ q) of two logit rows by the definition, in double.
double klOf(const float* p, const float* q, int64_t vocab) {
    double zp = 0.0, zq = 0.0;
    const double mp = *std::max_element(p, p + vocab), mq = *std::max_element(q, q + vocab);
    for (int64_t v = 0; v < vocab; ++v) {
        zp += std::exp(p[v] - mp);
        zq += std::exp(q[v] - mq);
    }
    double kl = 0.0;
    for (int64_t v = 0; v < vocab; ++v) {
        const double lp = p[v] - mp - std::log(zp), lq = q[v] - mq - std::log(zq);
        kl += std::exp(lp) * (lp - lq);
    }
    return kl;
}

Pooled recompute(const QString& folder) {
    auto backend = makeCpuBackend();
    const auto model = loadModel(folder.toStdString(), *backend);
    const auto tokenizer = tokenize::Tokenizer::load(folder.toStdString());
    const variants::VariantSpec window = variants::parseVariantSpec(kWindow);
    CaptureRequest capture;
    capture.logits = true;
    Pooled pooled;
    for (const QString& text : kEffectTexts) {
        const ModelInput input = app::prepareText(tokenizer.get(), text).input;
        const Tensor p = model->forward(input, capture).logits,
                     q = model->forward(input, capture, window).logits;
        const int64_t vocab = p.dim(1);
        for (int64_t t = 0; t < p.dim(0); ++t) {
            const float *a = p.data() + t * vocab, *b = q.data() + t * vocab;
            pooled.kl += klOf(a, b, vocab);
            pooled.agree +=
                std::max_element(a, a + vocab) - a == std::max_element(b, b + vocab) - b;
            ++pooled.positions;
        }
    }
    pooled.kl /= pooled.positions;
    pooled.agree /= pooled.positions;
    return pooled;
}
} // namespace

class TestVariantEffectCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qunsetenv("DISPLAY");
        qunsetenv("WAYLAND_DISPLAY");
        qunsetenv("QT_QPA_PLATFORM");
        qunsetenv("XDG_RUNTIME_DIR");
    }

    void tableAndFigureOverACorpus() {
        test::ScratchDir dir;
        const QString corpus = dir.filePath("corpus.txt"), window = dir.filePath("window.json"),
                      learned = dir.filePath("learned.json"), out = dir.filePath("figures");
        test::writeFile(corpus, kEffectTexts.join('\n').toUtf8());
        test::writeFile(window, kWindow);
        test::writeFile(learned, R"({"position": "learned"})");
        const QString gpt2 = test::goldenRoot() + "/gpt2", llama = test::goldenRoot() + "/llama";
        const test::CliResult run =
            runHeadlight({"figures", "variant-effect", "--corpus", corpus, "--out", out, "--models",
                          gpt2 + "," + llama, "--variants", window, "--variants", learned,
                          "--format", "svg", "--format", "png", "--backend", "cpu"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.err.contains(gpt2 + " 3/3 texts"), qPrintable(run.err));
        QVERIFY(run.out.contains("wrote 3 files"));
        QCOMPARE(QImage(out + "/variant-effect.png").size(), QSize(1600, 1100));
        const QByteArray svg = test::readFile(out + "/variant-effect.svg");
        QVERIFY(svg.contains("Mean KL") && svg.contains("Top-1 agreement") &&
                svg.contains("3 texts from corpus.txt"));

        const QStringList lines = QString::fromUtf8(test::readFile(out + "/variant-effect.csv"))
                                      .split('\n', Qt::SkipEmptyParts);
        QCOMPARE(
            lines.first(),
            QString(
                "model,variant,texts,positions,mean_kl_nats,top1_agreement,mean_top5_flips,error"));
        QCOMPARE(lines.size(), 1 + 2 * 2);
        for (const QString& model : {gpt2, llama}) {
            const Pooled expected = recompute(model);
            const QStringList row = lines.filter(model + ",window,").value(0).split(',');
            QCOMPARE(row.size(), 8);
            QCOMPARE(row[2], QString("3"));
            QCOMPARE(row[3].toInt(), expected.positions);
            QVERIFY2(std::abs(row[4].toDouble() - expected.kl) < 1e-4, qPrintable(row.join(',')));
            QVERIFY2(std::abs(row[5].toDouble() - expected.agree) < 1e-9,
                     qPrintable(row.join(',')));
            QVERIFY(expected.kl > 1e-3);
        }
        const QString refused = lines.filter(llama + ",learned,").value(0);
        QVERIFY2(refused.contains(",0,0,") && refused.contains("no learned position table"),
                 qPrintable(refused));
    }

    void badArgumentsGetOneLine() {
        test::ScratchDir dir;
        const QString corpus = dir.filePath("corpus.txt");
        test::writeFile(corpus, "some text\n");
        const QString out = dir.filePath("figures");
        test::CliResult run =
            runHeadlight({"figures", "variant-effect", "--corpus", corpus, "--out", out, "--models",
                          test::goldenRoot() + "/gpt2"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.startsWith("headlight figures: variant-effect needs --variants\nusage: "),
                 qPrintable(run.err));
        const QString window = dir.filePath("w.json");
        test::writeFile(window, kWindow);
        run = runHeadlight({"figures", "variant-effect", "--corpus", corpus, "--out", out,
                            "--models", test::goldenRoot() + "/bert", "--variants", window});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("has no masked-LM head"), qPrintable(run.err));
        run = runHeadlight({"figures", "variant-effect", "--corpus", corpus, "--out", out,
                            "--models", "no_such_model", "--variants", window});
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.err.contains("'no_such_model' is neither a checkpoint folder nor a zoo model"),
                 qPrintable(run.err));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestVariantEffectCli)
#include "test_variant_effect_cli.moc"
