// Training series for the scrubber (docs/scrubber.md): a zoo run folder read from its run.json
// (and refused in one line when a folder is missing or steps do not increase), the revisions of
// a cached Hub repository in training-step order, each checkpoint measured (head roles, loss,
// in-context-learning score), and `headlight export --checkpoints`: the view at every checkpoint
// as numbered PNG frames or one animated PNG (read back here chunk by chunk, each frame rebuilt as
// a PNG of its own and decoded by Qt, against the numbered frames), and the lines over training
// as CSV, PNG and SVG, each with its provenance, a progress line per checkpoint on stderr, and
// one-line refusals.
#include "analysis/training_metrics.h"
#include "backend/backend_choice.h"
#include "checkpoint_metrics.h"
#include "cli_runner.h"
#include "error_of.h"
#include "export/animated_png.h"
#include "export/atomic_write.h"
#include "export/embedded_metadata.h"
#include "golden.h"
#include "hub_cache_fixture.h"
#include "io/checkpoint_series.h"
#include "io/tensor_file.h"
#include "provenance.h"
#include "run_folder_fixture.h"
#include "series_source.h"
#include "text_input.h"

#include <QBuffer>
#include <QImage>
#include <QTest>
#include <QtEndian>
#include <cmath>

using namespace headlight;

namespace {
const QString kRunText = QStringLiteral("abcabcabc");

QStringList csvRows(const QString& path) {
    return QString::fromUtf8(render::csvWithoutComments(test::readFile(path)))
        .split('\n', Qt::SkipEmptyParts);
}
// The PNG specification's CRC-32 (ISO 3309), bit by bit: the test's own, not zlib's.
quint32 pngCrc(const QByteArray& bytes) {
    quint32 crc = 0xffffffffu;
    for (const char byte : bytes) {
        crc ^= quint8(byte);
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

struct PngChunk {
    QByteArray type, data;
};

// Every chunk of a PNG file after its signature; fails the test on a bad length or CRC.
std::vector<PngChunk> pngChunks(const QByteArray& file) {
    std::vector<PngChunk> chunks;
    if (!file.startsWith("\x89PNG\r\n\x1a\n")) return chunks;
    for (qsizetype at = 8; at + 12 <= file.size();) {
        const quint32 length = qFromBigEndian<quint32>(file.constData() + at);
        const QByteArray typed = file.mid(at + 4, 4 + qsizetype(length));
        if (qFromBigEndian<quint32>(file.constData() + at + 8 + length) != pngCrc(typed)) return {};
        chunks.push_back({typed.left(4), typed.mid(4)});
        at += 12 + qsizetype(length);
    }
    return chunks;
}

QByteArray pngChunk(const QByteArray& type, const QByteArray& data) {
    QByteArray out(4, '\0');
    qToBigEndian(quint32(data.size()), out.data());
    QByteArray crc(4, '\0');
    qToBigEndian(pngCrc(type + data), crc.data());
    return out + type + data + crc;
}

quint32 be32(const QByteArray& data, int at) {
    return qFromBigEndian<quint32>(data.constData() + at);
}

QString runJsonError(const QString& run) {
    return test::errorOf<io::CheckpointError>([&] { io::readRunFolder(run.toStdString()); });
}
} // namespace

class TestCheckpointSeries : public QObject {
    Q_OBJECT

    test::ScratchDir scratch_;
    QString run_; // steps 0, 100, 200: copy, rope, copy

    test::CliResult exportRun(const QStringList& more) {
        return test::runHeadlight(QStringList{"export", "--checkpoints", run_, "--backend", "cpu"} +
                                  more);
    }

private Q_SLOTS:
    void initTestCase() {
        QVERIFY(scratch_.isValid());
        run_ = test::makeRunFolder(scratch_.filePath("induction"),
                                   {{0, "copy"}, {100, "rope"}, {200, "copy"}}, kRunText);
    }

    void aRunFolderListsItsCheckpoints() {
        const io::CheckpointSeries series = app::openCheckpointSeries(run_);
        QCOMPARE(QString::fromStdString(series.name), QString("induction"));
        QCOMPARE(QString::fromStdString(series.text), kRunText);
        QCOMPARE(series.checkpoints.size(), std::size_t(3));
        QCOMPARE(QString::fromStdString(series.checkpoints[1].label), QString("step 100"));
        QCOMPARE(*series.checkpoints[1].step, int64_t(100));
        QCOMPARE(*series.checkpoints[2].heldOutLoss, 3.0);
        QCOMPARE(
            QFileInfo(QString::fromStdString(series.checkpoints[1].folder)).canonicalFilePath(),
            QFileInfo(run_ + "/step_000100").canonicalFilePath());
    }

    void aBrokenRunJsonIsRefusedInOneLine() {
        const QString run = test::makeRunFolder(scratch_.freshFolder(), {{0, "copy"}}, kRunText);
        const QString file = run + "/run.json";
        const QString good = QString::fromUtf8(test::readFile(file));
        test::writeFile(file, QString(good).replace("step_000000\"", "step_000009\"").toUtf8());
        QCOMPARE(runJsonError(run), file +
                                        ": checkpoints[0].folder step_000009 does not exist in " +
                                        QDir::cleanPath(QDir(run).absolutePath()));
        test::writeFile(file, QString(good).replace("step_000000\"", "../step_000000\"").toUtf8());
        QCOMPARE(runJsonError(run), file + ": checkpoints[0].folder must be a folder name inside "
                                           "the run");
        test::writeFile(file, QString(good).replace("headlight-run", "other").toUtf8());
        QCOMPARE(runJsonError(run), file + ": \"format\" must be \"headlight-run\"");
        test::writeFile(file, "{\"format\": \"headlight-run\", \"name\": \"x\", "
                              "\"checkpoints\": [{\"step\": 5, \"folder\": \"step_000000\"}, "
                              "{\"step\": 5, \"folder\": \"step_000000\"}]}");
        QCOMPARE(runJsonError(run), file + ": checkpoints[1].step 5 does not come after step 5: "
                                           "steps must increase");
        test::writeFile(file, "{\"format\": \"headlight-run\", \"name\": \"x\", "
                              "\"checkpoints\": []}");
        QCOMPARE(runJsonError(run), file + ": \"checkpoints\" must be a non-empty list");
        const test::CliResult cli = test::runHeadlight(
            {"export", "--checkpoints", run, "--view", "training", "--out", "x.csv"});
        QVERIFY(cli.exitCode != 0);
        QCOMPARE(cli.err,
                 "headlight export: " + file + ": \"checkpoints\" must be a non-empty list\n");
    }

    void hubRevisionsMakeASeriesInStepOrder() {
        test::FakeHubCache cache(scratch_.freshFolder());
        const QString id = QStringLiteral("test-org/tiny-pythia");
        const char* names[] = {"step1000", "step0", "step2", "main"};
        for (int i = 0; i < 3; ++i) {
            const QString commit = QString(40, QChar('1' + i));
            cache.addModel(id, test::goldenRoot() + (i % 2 ? "/gpt_neox" : "/gpt_neox_sequential"),
                           commit, false);
            cache.addRef(id, names[i], commit);
        }
        cache.addRef(id, names[3], QString(40, QChar('1'))); // main is step1000's commit
        qputenv("HF_HUB_CACHE", cache.root().toUtf8());
        const io::CheckpointSeries series = app::openCheckpointSeries(id);
        QCOMPARE(QString::fromStdString(series.name), id);
        QStringList labels;
        for (const io::SeriesCheckpoint& checkpoint : series.checkpoints)
            labels << QString::fromStdString(checkpoint.label);
        QCOMPARE(labels, QStringList({"step0", "step2", "step1000"}));
        QCOMPARE(*series.checkpoints[2].step, int64_t(1000));
        QVERIFY(test::errorOf<io::CheckpointError>([] {
                    app::openCheckpointSeries("no-such-run");
                }).startsWith("no-such-run is neither a training run"));
    }

    // Each checkpoint's loss is the mean of its tokens' losses, and the ICL score the difference
    // at the scaled positions; the roles are scored on `heads`' default probes.
    void eachCheckpointIsMeasured() {
        const io::CheckpointSeries series = app::openCheckpointSeries(run_);
        QStringList reported;
        const auto metrics = app::measureSeries(
            series, kRunText, chooseBackend(BackendKind::Cpu),
            [&reported](int done, int total, const QString& label) {
                reported << QStringLiteral("%1/%2 %3").arg(done).arg(total).arg(label);
                return true;
            });
        QCOMPARE(reported, QStringList({"0/3 step 0", "1/3 step 100", "2/3 step 200", "3/3 "}));
        QCOMPARE(metrics.size(), std::size_t(3));
        const app::CheckpointMetrics& first = metrics.front();
        QCOMPARE(first.tokens, 9); // bytes, no special tokens in the zoo's byte tokenizer
        QCOMPARE(first.icl.late, 8);
        QCOMPARE(first.icl.early, 1);
        QCOMPARE(first.probeLength, 20);
        QCOMPARE(first.roles.size(), std::size_t(2 * 4));
        QCOMPARE(metrics[2].loss, first.loss); // the same weights give the same numbers
        QVERIFY(metrics[1].loss != first.loss);
        // The loss recomputed from the logits of an ordinary pass.
        const auto model =
            app::loadCheckpoint(test::zooModel("copy"), chooseBackend(BackendKind::Cpu), {});
        const app::PreparedText prepared = app::prepareText(model->tokenizer.get(), kRunText);
        CaptureRequest capture;
        capture.logits = true;
        const auto losses = analysis::tokenLosses(
            model->model->forward(prepared.input, capture).logits, prepared.input.ids);
        QVERIFY(std::abs(first.loss - analysis::meanLoss(losses)) < 1e-9);
        QVERIFY(std::abs(first.iclScore - (losses[7] - losses[0])) < 1e-9);
        // Stopped by the progress callback after the first checkpoint.
        const auto stopped =
            app::measureSeries(series, kRunText, chooseBackend(BackendKind::Cpu),
                               [](int done, int, const QString&) { return done < 1; });
        QCOMPARE(stopped.size(), std::size_t(1));
    }
    void linesAsCsvHoldEveryCheckpoint() {
        const QString out = scratch_.filePath("lines.csv");
        const test::CliResult cli = exportRun({"--view", "training", "--out", out});
        QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
        QCOMPARE(cli.err, QString("headlight export: checkpoint 1/3 step 0\n"
                                  "headlight export: checkpoint 2/3 step 100\n"
                                  "headlight export: checkpoint 3/3 step 200\n"));
        const QStringList lines = csvRows(out);
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines[0].startsWith("checkpoint,label,step,loss,held_out_loss,icl_score,"
                                     "previous token L"),
                 qPrintable(lines[0]));
        QCOMPARE(lines[0].split(',').size(), 9);
        const auto metrics = app::measureSeries(app::openCheckpointSeries(run_), kRunText,
                                                chooseBackend(BackendKind::Cpu),
                                                [](int, int, const QString&) { return true; });
        for (int i = 0; i < 3; ++i) {
            const QStringList row = lines[i + 1].split(',');
            QCOMPARE(row[0], QString::number(i));
            QCOMPARE(row[1], QStringLiteral("step %1").arg(100 * i));
            QCOMPARE(row[2], QString::number(100 * i));
            QVERIFY(std::abs(row[3].toDouble() - metrics[std::size_t(i)].loss) < 1e-6);
            QCOMPARE(row[4].toDouble(), 5.0 - i);
            QVERIFY(std::abs(row[5].toDouble() - metrics[std::size_t(i)].iclScore) < 1e-6);
        }
        const std::optional<app::Provenance> provenance = app::readProvenance(out);
        QVERIFY(provenance);
        QCOMPARE(provenance->modelName, QString("induction"));
        QVERIFY(provenance->command.contains("--checkpoints"));
        QCOMPARE(QString::fromStdString(provenance->scenario.view), QString("training"));
    }

    void linesAsFiguresAndAFilter() {
        for (const QString name : {"lines.png", "lines.svg"}) {
            const QString out = scratch_.filePath(name);
            const test::CliResult cli =
                exportRun({"--view", "training", "--out", out, "--revision-filter", "step [12]00"});
            QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
            QCOMPARE(cli.err.count('\n'), 2);
            QVERIFY(app::readProvenance(out).has_value());
        }
        QVERIFY(!QImage(scratch_.filePath("lines.png")).isNull());
    }

    void framesOfAViewOnePerCheckpoint() {
        const QString folder = scratch_.filePath("frames");
        const test::CliResult cli =
            exportRun({"--view", "heatmap", "--layer", "1", "--head", "2", "--out", folder});
        QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
        QCOMPARE(QDir(folder).entryList(QDir::Files),
                 QStringList({"frame_0000.png", "frame_0001.png", "frame_0002.png"}));
        QVERIFY(!QImage(folder + "/frame_0000.png").isNull());
        std::vector<app::Provenance> frames;
        for (const QString& frame : QDir(folder).entryList(QDir::Files))
            frames.push_back(app::readProvenance(folder + "/" + frame).value());
        // The same weights draw the same numbers (steps 0 and 200), other weights others.
        QCOMPARE(frames[0].dataSha256, frames[2].dataSha256);
        QVERIFY(frames[0].dataSha256 != frames[1].dataSha256);
        const std::optional<app::Provenance> provenance = frames[1];
        QCOMPARE(QFileInfo(QString::fromStdString(provenance->scenario.model)).canonicalFilePath(),
                 QFileInfo(run_ + "/step_000100").canonicalFilePath());
        QCOMPARE(provenance->scenario.selection.layer, 1);
    }

    // The numbered frames of the test above, as one animated PNG: acTL says 3 frames that loop,
    // each fcTL covers the canvas for --frame-ms, sequence numbers run 0, 1, 2, … over fcTL and
    // fdAT, and each frame, rebuilt as a PNG of its own, decodes to the numbered frame's pixels.
    void anAnimatedPngHoldsEveryFrame() {
        const QString out = scratch_.filePath("induction.png");
        const test::CliResult cli = exportRun({"--view", "heatmap", "--layer", "1", "--head", "2",
                                               "--frame-ms", "250", "--out", out});
        QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
        const std::vector<PngChunk> chunks = pngChunks(test::readFile(out));
        QVERIFY(chunks.size() > 8);
        QCOMPARE(chunks.front().type, QByteArray("IHDR"));
        QCOMPARE(chunks[1].type, QByteArray("acTL"));
        QCOMPARE(be32(chunks[1].data, 0), 3u);
        QCOMPARE(be32(chunks[1].data, 4), 0u);
        QCOMPARE(chunks.back().type, QByteArray("IEND"));
        const QByteArray header = chunks.front().data;
        std::vector<QByteArray> frames; // each frame's compressed image data
        quint32 sequence = 0;
        for (const PngChunk& chunk : chunks) {
            if (chunk.type == "fcTL") {
                QCOMPARE(be32(chunk.data, 0), sequence++);
                QCOMPARE(chunk.data.mid(4, 8), header.left(8)); // the whole canvas
                QCOMPARE(be32(chunk.data, 12), 0u);
                QCOMPARE(be32(chunk.data, 16), 0u);
                QCOMPARE(chunk.data.mid(20, 4), QByteArray::fromHex("00fa03e8")); // 250/1000 s
                frames.emplace_back();
            } else if (chunk.type == "IDAT") {
                QCOMPARE(frames.size(), std::size_t(1)); // only the first frame is plain PNG
                frames.back() += chunk.data;
            } else if (chunk.type == "fdAT") {
                QCOMPARE(be32(chunk.data, 0), sequence++);
                frames.back() += chunk.data.mid(4);
            }
        }
        QCOMPARE(frames.size(), std::size_t(3));
        for (std::size_t f = 0; f < frames.size(); ++f) {
            const QByteArray alone = QByteArray("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", header) +
                                     pngChunk("IDAT", frames[f]) + pngChunk("IEND", {});
            const QImage decoded = QImage::fromData(alone, "png");
            const QImage numbered(
                scratch_.filePath(QStringLiteral("frames/frame_%1.png").arg(f, 4, 10, QChar('0'))));
            QVERIFY(!decoded.isNull() && !numbered.isNull());
            QVERIFY2(decoded.convertToFormat(QImage::Format_RGB32) ==
                         numbered.convertToFormat(QImage::Format_RGB32),
                     qPrintable(QStringLiteral("frame %1").arg(f)));
        }
        // The first frame's text chunks stay: the file carries its provenance.
        const std::optional<app::Provenance> provenance = app::readProvenance(out);
        QVERIFY(provenance.has_value());
        QCOMPARE(QFileInfo(QString::fromStdString(provenance->scenario.model)).canonicalFilePath(),
                 QFileInfo(run_ + "/step_000000").canonicalFilePath());
    }

    // Frames of different sizes cannot share an animation.
    void framesOfDifferentSizesAreRefused() {
        const auto png = [](int width) {
            QImage image(width, 4, QImage::Format_RGB32);
            image.fill(Qt::red);
            QBuffer buffer;
            buffer.open(QIODevice::WriteOnly);
            image.save(&buffer, "png");
            return buffer.data();
        };
        QCOMPARE(
            test::errorOf<render::ExportError>([&] {
                render::animatedPng("a.png", {png(4), png(5)}, 100);
            }),
            QString(
                "cannot write a.png: frame 2 differs from the first in size or pixel format; every "
                "frame of an animation must match"));
        QCOMPARE(test::errorOf<render::ExportError>([&] {
                     render::animatedPng("a.png", {png(4), "not a png"}, 100);
                 }),
                 QString("cannot write a.png: frame 2 is not a PNG image"));
    }

    void refusals() {
        const auto refusal = [this](const QStringList& more) {
            const test::CliResult cli = exportRun(more);
            return cli.exitCode != 0 && cli.err.count('\n') == 1 ? cli.err.trimmed() : cli.err;
        };
        QCOMPARE(refusal({"--view", "training", "--out", scratch_.filePath("x.safetensors")}),
                 "headlight export: --view training writes .png, .svg, .pdf or .csv, not " +
                     scratch_.filePath("x.safetensors"));
        QCOMPARE(refusal({"--view", "heatmap", "--out", scratch_.filePath("x.svg")}),
                 "headlight export: --out " + scratch_.filePath("x.svg") +
                     ": the frames of a view go to a folder (frame_0000.png, …) or to one "
                     "animated .png or .apng; --view training writes one file");
        QCOMPARE(refusal({"--view", "heatmap", "--out", scratch_.filePath("f"), "--frame-ms", "9"}),
                 QString("headlight export: --frame-ms is for an animated --out (.png or .apng)"));
        QVERIFY(refusal({"--view", "heatmap", "--out", "x.png", "--frame-ms", "0"})
                    .startsWith("headlight export: --frame-ms"));
        QVERIFY(refusal({"--view", "nope", "--out", "x"})
                    .startsWith("headlight export: unknown view 'nope'"));
        QCOMPARE(refusal({"--view", "training", "--out", "x.csv", "--revision-filter", "step 9"}),
                 QString("headlight export: --revision-filter 'step 9' matches no checkpoint of "
                         "induction"));
        QCOMPARE(refusal({"--view", "training", "--out", "x.csv", "--model", "copy"}),
                 QString("headlight export: --checkpoints names the models; leave out --model"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestCheckpointSeries)
#include "test_checkpoint_series.moc"
