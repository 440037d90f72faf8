// `headlight export --view qk-embedding` and `--view qk-embedding-grid` as a user runs them on
// the tiny GPT-2: the CSV holds one row per query and key of the text (panel, role, position,
// token, kind, x, y) whose tokens and kinds are the tokenizer's and whose coordinates are the
// embedding of the head's queries and keys captured here from the same pass; the grid's CSV every
// layer × head; PDF and SVG export; a variant that rebuilds attention is refused in one line.
#include "analysis/query_key_embedding.h"
#include "backend/backend_factory.h"
#include "cli_runner.h"
#include "golden.h"
#include "temp_files.h"
#include "text_input.h"

#include <QFile>
#include <QTest>
#include <cmath>

using namespace headlight;
using test::runHeadlight;

namespace {

const QString kQueryKeyText = QStringLiteral("Hello, world! It is a test.");

// The CSV's data lines split at commas (no label here holds a comma or a quote but ","; the
// parser below takes RFC 4180's quoting for that one).
std::vector<QStringList> qkCsvRows(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    std::vector<QStringList> rows;
    for (const QString& line : QString::fromUtf8(file.readAll()).split('\n')) {
        if (line.isEmpty() || line.startsWith('#')) continue;
        QStringList fields;
        QString field;
        bool quoted = false;
        for (int i = 0; i < line.size(); ++i) {
            const QChar c = line[i];
            if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"')
                field += '"', ++i;
            else if (c == '"')
                quoted = !quoted;
            else if (c == ',' && !quoted)
                fields << field, field.clear();
            else
                field += c;
        }
        rows.push_back(fields << field);
    }
    return rows;
}

QStringList qkExportArgs(const QString& view, const QString& out) {
    return {"export", "--model",     test::goldenRoot() + "/gpt2",
            "--text", kQueryKeyText, "--view",
            view,     "--layer",     "1",
            "--head", "2",           "--out",
            out};
}
} // namespace

class TestQueryKeyCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void csvHoldsEveryQueryAndKey() {
        test::ScratchDir dir;
        const QString csv = dir.filePath("qk.csv");
        const test::CliResult run = runHeadlight(qkExportArgs("qk-embedding", csv));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const std::vector<QStringList> rows = qkCsvRows(csv);
        QVERIFY(!rows.empty());
        QCOMPARE(rows[0], QStringList({"panel", "role", "position", "token", "kind", "x", "y"}));

        const QString folder = test::goldenRoot() + "/gpt2";
        const auto tokenizer = tokenize::Tokenizer::load(folder.toStdString());
        const app::PreparedText prepared = app::prepareText(tokenizer.get(), kQueryKeyText);
        auto backend = makeCpuBackend();
        const auto model = loadModel(folder.toStdString(), *backend);
        CaptureRequest capture;
        capture.queriesKeys = true;
        const Trace trace = model->forward(prepared.input, capture);
        const auto e = analysis::embedQueryKeyHead(trace.layers[1].queries, trace.layers[1].keys, 4,
                                                   4, 2, trace.valid);
        const int tokens = int(prepared.labels.size());
        QCOMPARE(int(rows.size()), 1 + 2 * tokens);
        for (std::size_t r = 1; r < rows.size(); ++r) {
            const QStringList& row = rows[r];
            const bool key = row[1] == "key";
            const int t = row[2].toInt();
            QCOMPARE(row[1], key ? QString("key") : QString("query"));
            QCOMPARE(row[3], prepared.labels[t]);
            QCOMPARE(row[4], QString(analysis::tokenKindName(prepared.kinds[std::size_t(t)])));
            QVERIFY(std::abs(row[5].toDouble() - (key ? e.keyX(t) : e.queryX(t))) < 1e-6);
            QVERIFY(std::abs(row[6].toDouble() - (key ? e.keyY(t) : e.queryY(t))) < 1e-6);
        }
        QCOMPARE(rows[3][3], QString(","));
        QCOMPARE(rows[3][4], QString("punctuation or space"));
    }

    void gridAndPagesExport() {
        test::ScratchDir dir;
        const QString csv = dir.filePath("grid.csv");
        const test::CliResult run = runHeadlight(qkExportArgs("qk-embedding-grid", csv));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const std::vector<QStringList> rows = qkCsvRows(csv);
        const int pointsPerHead = (int(rows.size()) - 1) / 8;
        QCOMPARE(int(rows.size()), 1 + 8 * pointsPerHead); // 2 layers × 4 heads
        QVERIFY(rows[1][0].startsWith(QString::fromUtf8("L0 H0 · ")));
        QVERIFY(rows.back()[0].startsWith(QString::fromUtf8("L1 H3 · ")));
        for (const char* suffix : {".pdf", ".svg"}) {
            const QString out = dir.filePath(QString("qk") + suffix);
            const test::CliResult page = runHeadlight(qkExportArgs("qk-embedding", out));
            QVERIFY2(page.exitCode == 0, qPrintable(page.err));
            QFile file(out);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray bytes = file.readAll();
            QVERIFY(QString(suffix) == ".pdf" ? bytes.startsWith("%PDF-")
                                              : bytes.contains("PC1 (") && bytes.contains("key"));
        }
    }

    void variantThatRebuildsAttentionIsRefused() {
        test::ScratchDir dir;
        const QString spec = dir.filePath("lsh.json");
        QFile file(spec);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"attention": {"kernel": "lsh"}})");
        file.close();
        QStringList args = qkExportArgs("qk-embedding", dir.filePath("qk.png"));
        args << "--variant" << spec;
        const test::CliResult run = runHeadlight(args);
        QVERIFY(run.exitCode != 0);
        QCOMPARE(run.err.trimmed(),
                 QString("headlight export: nothing to export: The query-key embedding reads the "
                         "queries and keys of exact softmax attention, and this pass's options "
                         "change attention or the layer loop: turn them off to see it."));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestQueryKeyCli)
#include "test_query_key_cli.moc"
