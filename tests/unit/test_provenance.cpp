// Provenance of exports (app/figures/provenance.h, docs/export.md): `headlight export` writes it
// into PNG, SVG, PDF, CSV and safetensors files, and it reads back with every field as written
// (file hashes against QCryptographicHash here, the scenario, versions, the command); `headlight
// reproduce` says "identical" for each format on an unchanged model, "differs" with exit 1 for a
// figure whose table was edited, and refuses with one line when the weights changed, the model
// folder or the corpus is gone, or the file carries no provenance.
#include "build_info.h"
#include "cli_runner.h"
#include "export/embedded_metadata.h"
#include "golden.h"
#include "provenance.h"
#include "temp_files.h"

#include <QCryptographicHash>
#include <QDir>
#include <QJsonDocument>
#include <QTest>

using namespace headlight;
using test::runHeadlight;

namespace {

const QStringList kFormats = {"png", "svg", "pdf", "csv", "safetensors"};
// XML and JSON specials and non-Latin letters: PNG then needs iTXt, SVG and XMP escaping.
const QString kText = QStringLiteral("The cat & <the \"mat\"> Ωμέγα 注意力");

QString sha256Of(const QByteArray& bytes) {
    return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

// A copy of the golden BERT that a test may change.
QString copyOfBert(const test::ScratchDir& dir) {
    const QString folder = dir.filePath("bert");
    QDir().mkpath(folder);
    const QDir source(test::goldenRoot() + "/bert");
    for (const QString& name : source.entryList(QDir::Files))
        QFile::copy(source.filePath(name), folder + "/" + name);
    return folder;
}

QStringList exportArgs(const QString& model, const QString& out) {
    return {"export", "--model", model, "--text",    kText, "--view", "heatmap", "--layer",
            "1",      "--head",  "2",   "--backend", "cpu", "--out",  out};
}

test::CliResult reproduce(const QString& figure) {
    return runHeadlight({"reproduce", figure});
}

// The one line of a refusal, checked to be the whole of stderr.
QString refusal(const test::CliResult& run) {
    return run.err.endsWith('\n') && run.err.count('\n') == 1 ? run.err.chopped(1) : run.err;
}
} // namespace

class TestProvenance : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        qunsetenv("DISPLAY");
        qunsetenv("QT_QPA_PLATFORM");
    }

    void everyFormatCarriesTheProvenanceItWasMadeWith() {
        test::ScratchDir dir;
        const QString model = copyOfBert(dir);
        for (const QString& format : kFormats) {
            const QString out = dir.filePath("fig." + format);
            const test::CliResult run = runHeadlight(exportArgs(model, out));
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            const std::optional<app::Provenance> read = app::readProvenance(out);
            QVERIFY2(read, qPrintable(format));
            QCOMPARE(read->modelName, QStringLiteral("bert"));
            QCOMPARE(read->modelFolder, model);
            QCOMPARE(read->files.weights,
                     (app::FileHashes{{"model.safetensors",
                                       sha256Of(test::readFile(model + "/model.safetensors"))}}));
            QCOMPARE(read->files.tokenizer.at("vocab.txt"),
                     sha256Of(test::readFile(model + "/vocab.txt")));
            QCOMPARE(read->files.tokenizer.size(), std::size_t(3)); // + tokenizer_config, special
            QCOMPARE(read->files.config.at("config.json"),
                     sha256Of(test::readFile(model + "/config.json")));
            QCOMPARE(read->scenario.text, kText.toStdString());
            QCOMPARE(read->scenario.view, std::string("heatmap"));
            QCOMPARE(read->scenario.selection.layer, 1);
            QCOMPARE(read->scenario.selection.head, 2);
            QVERIFY(read->scenario.variant.isEmpty());
            QCOMPARE(read->backend, QStringLiteral("cpu"));
            QVERIFY(!read->device.isEmpty());
            QCOMPARE(read->version, QStringLiteral(HEADLIGHT_VERSION));
            QCOMPARE(read->revision, app::buildRevision());
            QVERIFY(!read->corpus);
            QStringList command = exportArgs(model, "fig." + format);
            QCOMPARE(read->command, command);
            // The figure's numbers: the exported table, hashed here.
            const QString csv = dir.filePath("fig.csv");
            if (format == QLatin1String("csv"))
                QCOMPARE(read->dataSha256,
                         sha256Of(render::csvWithoutComments(test::readFile(csv))));
            // The JSON mapping round-trips every field.
            QCOMPARE(app::provenanceFromJson(app::provenanceToJson(*read)), *read);
        }
        // The same figure whatever the format: only --out differs.
        auto png = *app::readProvenance(dir.filePath("fig.png"));
        auto pdf = *app::readProvenance(dir.filePath("fig.pdf"));
        QCOMPARE(png.dataSha256, pdf.dataSha256);
        pdf.command = png.command;
        QCOMPARE(pdf, png);
        // A person reads how to regenerate the CSV in its first line.
        QVERIFY(test::readFile(dir.filePath("fig.csv"))
                    .startsWith("# Made by Headlight; regenerate with: headlight export --model " +
                                model.toUtf8()));
        QVERIFY(test::readFile(dir.filePath("fig.svg")).contains("<metadata>"));
    }

    void aCorpusIsRecordedByItsHash() {
        test::ScratchDir dir;
        const QString model = copyOfBert(dir);
        const QString corpus = dir.filePath("corpus.txt");
        test::writeFile(corpus, "The cat sat.\nA dog ran.\n");
        const QString out = dir.filePath("violins.csv");
        QVERIFY(runHeadlight({"export", "--model", model, "--texts", corpus, "--view",
                              "entropy-violins", "--backend", "cpu", "--out", out})
                    .exitCode == 0);
        const app::Provenance read = *app::readProvenance(out);
        QVERIFY(read.corpus);
        QCOMPARE(read.corpus->path, corpus);
        QCOMPARE(read.corpus->sha256, sha256Of(test::readFile(corpus)));
        QCOMPARE(reproduce(out).exitCode, 0);
        test::writeFile(corpus, "The cat sat.\nA dog sat.\n");
        const test::CliResult changed = reproduce(out);
        QCOMPARE(changed.exitCode, 1);
        QCOMPARE(refusal(changed),
                 "headlight reproduce: cannot reproduce: the corpus " + corpus + " changed");
    }

    void reproduceSaysIdenticalOnAnUnchangedModel() {
        test::ScratchDir dir;
        const QString model = copyOfBert(dir);
        for (const QString& format : kFormats) {
            const QString out = dir.filePath("fig." + format);
            QVERIFY(runHeadlight(exportArgs(model, out)).exitCode == 0);
            const test::CliResult run = reproduce(out);
            QVERIFY2(run.exitCode == 0, qPrintable(format + ": " + run.out + run.err));
            QCOMPARE(run.out, "identical: " + out + "\n");
        }
    }

    void reproduceSaysWhatDiffers() {
        test::ScratchDir dir;
        const QString model = copyOfBert(dir);
        const QString csv = dir.filePath("fig.csv");
        QVERIFY(runHeadlight(exportArgs(model, csv)).exitCode == 0);
        QByteArray bytes = test::readFile(csv);
        const qsizetype lastDigit = bytes.lastIndexOf(',') + 1;
        bytes[lastDigit] = bytes[lastDigit] == '9' ? '8' : '9';
        test::writeFile(csv, bytes);
        const test::CliResult run = reproduce(csv);
        QCOMPARE(run.exitCode, 1);
        QVERIFY2(run.out.startsWith("differs: " + csv + ": the table differs"),
                 qPrintable(run.out));
    }

    void reproduceRefusesAChangedOrMissingModel() {
        test::ScratchDir dir;
        const QString model = copyOfBert(dir);
        const QString png = dir.filePath("fig.png");
        QVERIFY(runHeadlight(exportArgs(model, png)).exitCode == 0);
        const QString weights = model + "/model.safetensors";
        const QString before = sha256Of(test::readFile(weights));
        QByteArray bytes = test::readFile(weights);
        bytes[bytes.size() - 1] = char(bytes[bytes.size() - 1] ^ 0x01); // one bit of one weight
        test::writeFile(weights, bytes);
        const test::CliResult changed = reproduce(png);
        QCOMPARE(changed.exitCode, 1);
        QCOMPARE(changed.out, QString());
        QCOMPARE(refusal(changed),
                 QStringLiteral("headlight reproduce: cannot reproduce: the model changed: %1 has "
                                "SHA-256 %2…, the figure was made from %3…")
                     .arg(weights, sha256Of(bytes).left(12), before.left(12)));
        QVERIFY(QDir(model).removeRecursively());
        const test::CliResult missing = reproduce(png);
        QCOMPARE(missing.exitCode, 1);
        QCOMPARE(refusal(missing), "headlight reproduce: cannot reproduce: the model folder " +
                                       model + " is missing");
    }

    void reproduceRefusesAFileWithoutProvenance() {
        test::ScratchDir dir;
        const QString csv = dir.filePath("plain.csv");
        test::writeFile(csv, "a,b\n1,2\n");
        const test::CliResult run = reproduce(csv);
        QCOMPARE(run.exitCode, 1);
        QCOMPARE(refusal(run), "headlight reproduce: cannot reproduce " + csv +
                                   ": it carries no Headlight provenance");
    }

    void aProvenanceMissingAFieldIsRefused() {
        app::Provenance provenance;
        provenance.scenario.model = "bert";
        provenance.scenario.view = "heatmap";
        QJsonObject json = app::provenanceToJson(provenance);
        QCOMPARE(app::provenanceFromJson(json), provenance);
        json.remove("data_sha256");
        try {
            app::provenanceFromJson(json);
            QFAIL("accepted a provenance without data_sha256");
        } catch (const app::ProvenanceError& error) {
            QCOMPARE(QString(error.what()), QStringLiteral("provenance: 'data_sha256' is missing"));
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestProvenance)
#include "test_provenance.moc"
