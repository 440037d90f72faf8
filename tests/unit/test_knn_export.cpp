// `headlight export --view knn-neighbours` on the tiny GPT-2 with the kNN-LM spec of
// tests/data/knn: the CSV has one row per position and neighbour, ranks 1..k nearest first, the
// datastore text around each neighbour with its stored next token in brackets, and p_mix equal to
// λ·p_kNN + (1 − λ)·p_LM at --lambda; the PDF is a PDF with the view's title; and one-line errors
// with a non-zero exit and no file for the view without a kNN-LM variant and for a bad --lambda.
#include "cli_runner.h"
#include "golden.h"
#include "temp_files.h"

#include <QFileInfo>
#include <QTest>

using namespace headlight;
using test::runHeadlight;

namespace {
const QString kKnnSpec = QStringLiteral(HEADLIGHT_TEST_DATA "/knn/spec.json");

QStringList knnExportArgs(const QString& out) {
    return {"export",
            "--model",
            test::goldenRoot() + "/gpt2",
            "--text",
            "The keeper lit the lamp at dusk.",
            "--view",
            "knn-neighbours",
            "--variant",
            kKnnSpec,
            "--out",
            out};
}

// RFC 4180 records: quoted fields may hold commas, quotes ("") and line breaks. '#' lines (the
// provenance comments before the header) are skipped.
std::vector<QStringList> csvRecords(const QString& text) {
    std::vector<QStringList> records;
    QStringList record;
    QString field;
    bool quoted = false, lineStart = true, comment = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (lineStart && c == '#') comment = true;
        lineStart = false;
        if (comment) {
            if (c == '\n') comment = false, lineStart = true;
            continue;
        }
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
                field += c, ++i;
            else if (c == '"')
                quoted = false;
            else
                field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            record << field;
            field.clear();
        } else if (c == '\n') {
            record << field;
            records.push_back(record);
            record.clear();
            field.clear();
            lineStart = true;
        } else {
            field += c;
        }
    }
    return records;
}
} // namespace

class TestKnnExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qunsetenv("DISPLAY");
        qunsetenv("WAYLAND_DISPLAY");
        qunsetenv("QT_QPA_PLATFORM");
    }

    void csvListsEveryNeighbourRemixedAtLambda() {
        test::ScratchDir dir;
        const QString csv = dir.filePath("knn.csv");
        const test::CliResult run = runHeadlight(knnExportArgs(csv) << "--lambda"
                                                                    << "0.8");
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const std::vector<QStringList> records = csvRecords(QString::fromUtf8(test::readFile(csv)));
        QVERIFY(records.size() > 1);
        QCOMPARE(records[0], QStringList({"position", "token", "target", "rank", "distance",
                                          "weight", "datastore_position", "stored_next", "context",
                                          "p_lm", "p_knn", "p_mix"}));
        const std::size_t rows = records.size() - 1;
        QCOMPARE(rows % 4, std::size_t(0)); // k = 4 in the spec
        double previous = 0.0, weights = 0.0;
        for (std::size_t r = 1; r < records.size(); ++r) {
            const QStringList& f = records[r];
            QCOMPARE(f.size(), 12);
            const int rank = f[3].toInt();
            QCOMPARE(rank, int((r - 1) % 4) + 1);
            QCOMPARE(f[0].toInt(), int((r - 1) / 4));
            const double distance = f[4].toDouble();
            if (rank > 1) QVERIFY(distance >= previous);
            previous = distance;
            weights = rank == 1 ? f[5].toDouble() : weights + f[5].toDouble();
            if (rank == 4) QVERIFY(std::abs(weights - 1.0) < 1e-6);
            QVERIFY2(f[8].contains('[') && f[8].contains(']'), qPrintable(f[8]));
            QVERIFY(f[6].toInt() >= 0);
            const double pLm = f[9].toDouble(), pKnn = f[10].toDouble(), pMix = f[11].toDouble();
            QVERIFY(pLm > 0.0 && pLm <= 1.0 && pKnn >= 0.0 && pKnn <= 1.0);
            QVERIFY2(std::abs(pMix - (0.8 * pKnn + 0.2 * pLm)) < 1e-6, qPrintable(f.join(',')));
        }
        QVERIFY(QString::fromUtf8(test::readFile(csv)).startsWith("# Made by Headlight"));
    }

    void pdfAndPngDrawTheView() {
        test::ScratchDir dir;
        for (const char* name : {"knn.pdf", "knn.png", "knn.svg"}) {
            const QString out = dir.filePath(name);
            const test::CliResult run = runHeadlight(knnExportArgs(out));
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY(QFileInfo(out).size() > 1000);
        }
        QVERIFY(test::readFile(dir.filePath("knn.pdf")).startsWith("%PDF-"));
        const QByteArray svg = test::readFile(dir.filePath("knn.svg"));
        QVERIFY(svg.contains("kNN-LM (Khandelwal et al. 2020) at position"));
        QVERIFY(svg.contains("ppl"));
    }

    void refusalsAreOneLine() {
        test::ScratchDir dir;
        const QString out = dir.filePath("knn.csv");
        QStringList args = knnExportArgs(out);
        args.removeAt(args.indexOf("--variant") + 1);
        args.removeAt(args.indexOf("--variant"));
        test::CliResult run = runHeadlight(args);
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err.trimmed(),
                 QString("headlight export: --view knn-neighbours needs a kNN-LM variant: give "
                         "--variant SPEC.json with a \"knn\" section (docs/variants.md, item 18)"));
        run = runHeadlight(knnExportArgs(out) << "--lambda"
                                              << "1.5");
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err.trimmed(),
                 QString("headlight export: --lambda must be a number from 0 to 1, not '1.5'"));
        args = knnExportArgs(out);
        args[args.indexOf("knn-neighbours")] = "heatmap";
        run = runHeadlight(args << "--lambda"
                                << "0.5");
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(run.err.trimmed(),
                 QString("headlight export: --lambda is for --view knn-neighbours"));
        QVERIFY(!QFileInfo::exists(out));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestKnnExport)
#include "test_knn_export.moc"
