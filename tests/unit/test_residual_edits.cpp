// Residual-stream edits (issue 34 §3, §4) as a user meets them: `headlight inspect --sae
// --clamp/--steer/--splice` and `--steering-vector`, `headlight steer`, the GGUF reader of
// llama.cpp's control vectors and the plan's checks. The KL at the last position that inspect
// prints is PyTorch's (tools/golden/make_steering_goldens.py) within 1e-4; `steer` writes the
// reference's vector; every mistake is refused in one line with a non-zero exit; the GGUF reader
// refuses truncated files, hostile counts and other tensor types with the reason.
#include "analysis/sae_edit.h"
#include "analysis/steering_vector.h"
#include "cli_runner.h"
#include "golden.h"
#include "golden_json.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "io/scenario.h"
#include "io/steering_vector_file.h"
#include "model/kv_cache.h"
#include "model/transformer.h"
#include "temp_files.h"
#include "variants/forward_plan.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>

using namespace headlight;

namespace {

const QString kEditData = QStringLiteral(HEADLIGHT_TEST_DATA "/steering/");
const QString kEditModels = QStringLiteral(HEADLIGHT_TEST_DATA "/models/");
const QString kEditSaes = QStringLiteral(HEADLIGHT_TEST_DATA "/sae/");

QJsonObject editGolden() {
    return test::readJsonObject(kEditData + "golden.json");
}

QString editCommaIds(const QJsonValue& ids) {
    return test::joinedIds(ids, ',');
}

// The reason of a refusal, or a note that there was none.
QString editRefusal(const QStringList& args, const QString& command = "inspect") {
    const test::CliResult result = test::runHeadlight(args);
    if (result.exitCode == 0) return "no refusal: " + result.out.left(200);
    return test::refusalReason(result, command);
}

// Little-endian pieces of a GGUF file.
void ggufPutU32(QByteArray& b, uint32_t v) {
    b.append(reinterpret_cast<const char*>(&v), 4);
}
void ggufPutU64(QByteArray& b, uint64_t v) {
    b.append(reinterpret_cast<const char*>(&v), 8);
}
void ggufPutString(QByteArray& b, const QByteArray& s) {
    ggufPutU64(b, uint64_t(s.size()));
    b.append(s);
}

// A version-3 GGUF of one 1-D tensor `name` of `count` elements of ggml type `type`.
QByteArray ggufOf(const QByteArray& name, uint64_t count, uint32_t type = 0) {
    QByteArray b("GGUF");
    ggufPutU32(b, 3);
    ggufPutU64(b, 1); // tensors
    ggufPutU64(b, 1); // key-values
    ggufPutString(b, "controlvector.model_hint");
    ggufPutU32(b, 8);
    ggufPutString(b, "tiny");
    ggufPutString(b, name);
    ggufPutU32(b, 1);
    ggufPutU64(b, count);
    ggufPutU32(b, type);
    ggufPutU64(b, 0);
    while (b.size() % 32)
        b.append('\0');
    for (uint64_t i = 0; i < count * (type == 1 ? 2 : 4); ++i)
        b.append('\0');
    return b;
}

QString ggufRefusal(const QByteArray& bytes) {
    try {
        io::parseGguf(std::as_bytes(std::span(bytes.constData(), std::size_t(bytes.size()))),
                      "t.gguf");
        return "no refusal";
    } catch (const io::GgufError& error) {
        return error.what();
    }
}
} // namespace

class TestResidualEdits : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString gpt2_, qwen2_; // the golden checkpoints without tokenizers: texts are token ids

    QString copyWithoutTokenizer(const QString& name, const QStringList& files) {
        const QString folder = dir_.filePath(name);
        if (!QDir().mkpath(folder)) return {};
        for (const QString& file : files)
            if (!QFile::copy(kEditModels + name + "/" + file, folder + "/" + file)) return {};
        return folder;
    }

private Q_SLOTS:
    void initTestCase() {
        gpt2_ = copyWithoutTokenizer("gpt2_plain", {"config.json", "model.safetensors.index.json",
                                                    "model-00001-of-00002.safetensors",
                                                    "model-00002-of-00002.safetensors"});
        qwen2_ = copyWithoutTokenizer("qwen2", {"config.json", "model.safetensors"});
        QVERIFY(!gpt2_.isEmpty() && !qwen2_.isEmpty());
    }

    // The printed KL at the last position is the reference's, for every SAE case.
    void inspectPrintsTheReferenceKl_data() {
        QTest::addColumn<QJsonObject>("goldenCase");
        for (const QJsonValue& c : editGolden()["sae_cases"].toArray())
            QTest::newRow(qPrintable(c["name"].toString())) << c.toObject();
    }

    void inspectPrintsTheReferenceKl() {
        QFETCH(QJsonObject, goldenCase);
        QStringList args{"inspect",
                         "--model",
                         goldenCase["model"].toString() == "qwen2" ? qwen2_ : gpt2_,
                         "--backend",
                         "cpu",
                         "--ids",
                         editCommaIds(goldenCase["ids"]),
                         "--sae",
                         kEditSaes + goldenCase["sae"].toString(),
                         "--json"};
        for (const QJsonValue& c : goldenCase["clamp"].toArray())
            args << "--clamp" << QStringLiteral("%1=%2").arg(c[0].toInt()).arg(c[1].toDouble());
        for (const QJsonValue& s : goldenCase["steer"].toArray())
            args << "--steer" << QStringLiteral("%1=%2").arg(s[0].toInt()).arg(s[1].toDouble());
        if (goldenCase["splice"].toString() != "none")
            args << QStringLiteral("--splice=%1").arg(goldenCase["splice"].toString());
        const test::CliResult run = test::runHeadlight(args);
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject edits =
            QJsonDocument::fromJson(run.out.toUtf8()).object()["edits"].toObject();
        const QJsonArray positions = edits["positions"].toArray();
        QCOMPARE(positions.size(), goldenCase["ids"].toArray().size());
        const double kl = positions.last()["kl"].toDouble();
        QVERIFY2(
            std::abs(kl - goldenCase["last_kl"].toDouble()) <= 1e-4,
            qPrintable(QStringLiteral("%1 vs %2").arg(kl).arg(goldenCase["last_kl"].toDouble())));
        QCOMPARE(edits["edits"].toArray().first()["splice"].toString(),
                 goldenCase["splice"].toString());
    }

    void inspectPrintsATable() {
        const QJsonObject c = editGolden()["sae_cases"].toArray().first().toObject();
        const test::CliResult run = test::runHeadlight(
            {"inspect", "--model", gpt2_, "--ids", editCommaIds(c["ids"]), "--sae",
             kEditSaes + c["sae"].toString(), "--clamp",
             QStringLiteral("%1=0").arg(c["clamp"][0][0].toInt()), "--splice", "with-error"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.startsWith("SAE " + kEditSaes + c["sae"].toString() +
                                    " at blocks.0.hook_resid_pre: splice with-error, clamp"),
                 qPrintable(run.out));
        QVERIFY(run.out.contains("\npos\ttoken\tKL(clean||edited)\ttop-1 clean -> edited\n"));
        QVERIFY(run.out.contains(" of 12 positions, mean top-5 flips "));
    }

    // `steer` writes the reference's vector; inspect adds it back with the reference's effect.
    void steerWritesTheReferenceVector() {
        const QJsonObject c = editGolden()["vector_case"].toObject();
        const auto lines = [&](const QString& name, const QJsonValue& sets) {
            QFile file(dir_.filePath(name));
            if (!file.open(QIODevice::WriteOnly)) return QString();
            for (const QJsonValue& ids : sets.toArray())
                file.write((editCommaIds(ids) + "\n").toUtf8());
            return file.fileName();
        };
        const QString out = dir_.filePath("vector.safetensors");
        const test::CliResult steer = test::runHeadlight(
            {"steer", "--model", qwen2_, "--positive", lines("positive.txt", c["positive"]),
             "--negative", lines("negative.txt", c["negative"]), "--hook", c["hook"].toString(),
             "--out", out});
        QVERIFY2(steer.exitCode == 0, qPrintable(steer.err));
        QVERIFY(steer.out.startsWith("steering vector at blocks.1.hook_resid_post from 3 positive "
                                     "and 3 negative texts: 48 values"));
        const io::SteeringVectorFile written = io::readSteeringVector(out.toStdString());
        QCOMPARE(QString::fromStdString(written.hook), c["hook"].toString());
        QCOMPARE(QString::fromStdString(written.metadata.at("method")),
                 QStringLiteral("difference-of-means"));
        const io::SafetensorsFile expected(
            (kEditData + c["name"].toString() + ".safetensors").toStdString());
        const Tensor want = expected.loadF32("vector");
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY(std::abs(written.direction.data()[i] - want.data()[i]) <= 1e-4);

        const test::CliResult run = test::runHeadlight(
            {"inspect", "--model", qwen2_, "--ids", editCommaIds(c["ids"]), "--steering-vector",
             out, "--strength", QString::number(c["strength"].toDouble()), "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject edits =
            QJsonDocument::fromJson(run.out.toUtf8()).object()["edits"].toObject();
        QVERIFY(std::abs(edits["positions"].toArray().last()["kl"].toDouble() -
                         c["last_kl"].toDouble()) <= 1e-4);
    }

    // --method pca-diff and pca-center write repeng's first principal component (NumPy's SVD
    // in make_steering_goldens.py), signed as repeng signs it; sets of unequal size are refused.
    void steerFindsThePairedPrincipalComponent_data() {
        QTest::addColumn<int>("index");
        QTest::newRow("pca-diff") << 0;
        QTest::newRow("pca-center") << 1;
    }
    void steerFindsThePairedPrincipalComponent() {
        QFETCH(int, index);
        const QJsonObject c = editGolden()["pca_cases"].toArray()[index].toObject();
        const auto lines = [&](const QString& name, const QJsonArray& sets) {
            const QString path = dir_.filePath(name);
            QByteArray text;
            for (const QJsonValue& ids : sets)
                text += (editCommaIds(ids) + "\n").toUtf8();
            test::writeFile(path, text);
            return path;
        };
        const QString positive = lines("pca-positive.txt", c["positive"].toArray());
        const QString out = dir_.filePath("pca.safetensors");
        const test::CliResult steer = test::runHeadlight(
            {"steer", "--model", qwen2_, "--positive", positive, "--negative",
             lines("pca-negative.txt", c["negative"].toArray()), "--hook", c["hook"].toString(),
             "--method", c["method"].toString(), "--out", out});
        QVERIFY2(steer.exitCode == 0, qPrintable(steer.err));
        const io::SteeringVectorFile written = io::readSteeringVector(out.toStdString());
        QCOMPARE(QString::fromStdString(written.metadata.at("method")), c["method"].toString());
        const Tensor want =
            io::SafetensorsFile((kEditData + c["name"].toString() + ".safetensors").toStdString())
                .loadF32("vector");
        QCOMPARE(written.direction.size(), want.size());
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY2(std::abs(written.direction.data()[i] - want.data()[i]) <= 1e-4,
                     qPrintable(QStringLiteral("value %1: %2 vs %3")
                                    .arg(i)
                                    .arg(written.direction.data()[i])
                                    .arg(want.data()[i])));

        QJsonArray fewer = c["negative"].toArray();
        fewer.removeLast();
        const test::CliResult unequal =
            test::runHeadlight({"steer", "--model", qwen2_, "--positive", positive, "--negative",
                                lines("fewer.txt", fewer), "--hook", c["hook"].toString(),
                                "--method", c["method"].toString(), "--out", out});
        QCOMPARE(unequal.exitCode, 1);
        QVERIFY2(unequal.err.contains("the positive set has 3 texts and the negative 2"),
                 qPrintable(unequal.err));
    }

    void inspectAddsALlamaCppControlVector() {
        const QJsonObject c = editGolden()["control_case"].toObject();
        const test::CliResult run = test::runHeadlight(
            {"inspect", "--model", gpt2_, "--backend", "cpu", "--ids", editCommaIds(c["ids"]),
             "--steering-vector", kEditData + c["file"].toString(), "--strength",
             QString::number(c["strength"].toDouble()), "--json"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject edits =
            QJsonDocument::fromJson(run.out.toUtf8()).object()["edits"].toObject();
        QCOMPARE(edits["edits"].toArray().size(), 2);
        QCOMPARE(edits["edits"][1]["hook"].toString(), QStringLiteral("blocks.2.hook_resid_post"));
        QVERIFY(std::abs(edits["positions"].toArray().last()["kl"].toDouble() -
                         c["last_kl"].toDouble()) <= 1e-4);
    }

    void badInputIsRefusedInOneLine_data() {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("reason");
        const QString standard = kEditSaes + "gpt2_plain_standard_pre0";
        QTest::newRow("feature out of range")
            << QStringList{"--sae", standard, "--clamp", "48=0", "--splice", "with-error"}
            << "--clamp 48: the SAE has features 0 to 47";
        QTest::newRow("steer out of range") << QStringList{"--sae", standard, "--steer", "900=1"}
                                            << "--steer 900: the SAE has features 0 to 47";
        QTest::newRow("bad syntax")
            << QStringList{"--sae", standard, "--clamp", "x=1", "--splice", "with-error"}
            << "--clamp 'x=1' is not FEATURE=VALUE";
        QTest::newRow("not finite")
            << QStringList{"--sae", standard, "--steer", "3=nan"} << "--steer '3=nan' is not";
        QTest::newRow("clamp without splice")
            << QStringList{"--sae", standard, "--clamp", "3=0"} << "give --splice with-error";
        QTest::newRow("bad splice") << QStringList{"--sae", standard, "--splice", "both"}
                                    << "--splice 'both' is not one of with-error, no-error, none";
        QTest::newRow("edit without sae")
            << QStringList{"--clamp", "3=0"} << "--clamp, --steer and --splice edit an SAE's";
        QTest::newRow("sae without edit")
            << QStringList{"--sae", standard} << "--sae needs an edit";
        QTest::newRow("width mismatch")
            << QStringList{"--sae", kEditSaes + "qwen2_jumprelu_post2", "--steer", "1=1"}
            << "the SAE reads 48 values per token at blocks.2.hook_resid_post but the model's "
               "residual stream has 32";
        QTest::newRow("hook off the residual stream")
            << QStringList{"--sae", kEditSaes + "gemma2_standard_resid_mid1", "--steer", "1=1"}
            << "edits reach the pass at the residual stream only (blocks.L.hook_resid_pre or "
               "hook_resid_post), not at blocks.1.hook_resid_mid";
        QTest::newRow("transcoder")
            << QStringList{"--sae",
                           kEditSaes + "gemma-scope-2-1b-pt/transcoder/layer_1_width_64_l0_small",
                           "--steer", "1=1"}
            << "a transcoder's features replace an MLP's output, which feature edits cannot "
               "splice in";
        QTest::newRow("strength without vector")
            << QStringList{"--strength", "2", "--json"} << "--strength scales --steering-vector";
    }

    void badInputIsRefusedInOneLine() {
        QFETCH(QStringList, extra);
        QFETCH(QString, reason);
        const QString refusal =
            editRefusal(QStringList{"inspect", "--model", gpt2_, "--ids", "1,2,3"} + extra);
        QVERIFY2(refusal.startsWith("headlight inspect: ") && refusal.contains(reason) &&
                     !refusal.contains('\n'),
                 qPrintable(refusal));
    }

    // A vector for another layer count: the hook, or a control vector's block, is refused.
    void vectorsAtMissingLayersAreRefused() {
        const auto refusalFor = [&](const QString& vector) {
            return editRefusal(
                {"inspect", "--model", gpt2_, "--ids", "1,2", "--steering-vector", vector});
        };
        const QString out = dir_.filePath("deep.safetensors");
        io::writeSteeringVector(out.toStdString(), Tensor({32}, 0.5f),
                                {{"hook", "blocks.7.hook_resid_post"}});
        QString refusal = refusalFor(out);
        QVERIFY2(refusal.contains("blocks.7.hook_resid_post but the model has 3 blocks"),
                 qPrintable(refusal));

        test::writeFile(dir_.filePath("deep.gguf"), ggufOf("direction.5", 32));
        refusal = refusalFor(dir_.filePath("deep.gguf"));
        QVERIFY2(refusal.contains("direction.5 steers block 5 but the model has 3 (0 to 2)"),
                 qPrintable(refusal));

        test::writeFile(dir_.filePath("wide.gguf"), ggufOf("direction.1", 40));
        refusal = refusalFor(dir_.filePath("wide.gguf"));
        QVERIFY2(refusal.contains("has 40 values but the model's residual stream has 32"),
                 qPrintable(refusal));
    }

    void steerRefusesBadInput() {
        QFile empty(dir_.filePath("empty.txt"));
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        QString refusal =
            editRefusal({"steer", "--model", gpt2_, "--positive", empty.fileName(), "--negative",
                         empty.fileName(), "--hook", "blocks.1.hook_resid_post", "--out",
                         dir_.filePath("never.safetensors")},
                        "steer");
        QVERIFY2(refusal.contains("holds no text"), qPrintable(refusal));
        refusal = editRefusal({"steer", "--model", gpt2_, "--positive", empty.fileName(),
                               "--negative", empty.fileName(), "--hook", "blocks.1.hook_z", "--out",
                               dir_.filePath("never.safetensors")},
                              "steer");
        QVERIFY2(refusal.contains("--hook: the SAE reads hook \"blocks.1.hook_z\""),
                 qPrintable(refusal));
        QVERIFY(!QFile::exists(dir_.filePath("never.safetensors")));
    }

    // The plan refuses an edit at a point the model does not have, or of another width.
    void planChecksEdits() {
        const std::unique_ptr<Backend> backend = makeCpuBackend();
        const auto model = loadModel((kEditModels + "gpt2_plain").toStdString(), *backend);
        variants::Intervention intervention;
        variants::ResidualEdit edit;
        edit.layer = 4;
        edit.width = 32;
        edit.name = "the test edit";
        edit.rows = [](const Tensor& x) { return x; };
        intervention.edits = {edit};
        try {
            variants::planForward({}, model->spec(), intervention, 3);
            QFAIL("no refusal");
        } catch (const variants::VariantError& error) {
            QCOMPARE(QString(error.what()),
                     QStringLiteral("the test edit: the model has 3 layers"));
        }
        intervention.edits.front().layer = 3; // before the final norm: accepted
        variants::planForward({}, model->spec(), intervention, 3);
        intervention.edits.front().width = 16;
        try {
            variants::planForward({}, model->spec(), intervention, 3);
            QFAIL("no refusal");
        } catch (const variants::VariantError& error) {
            QCOMPARE(QString(error.what()),
                     QStringLiteral("the test edit reads rows of 16 values, the residual stream "
                                    "has 32"));
        }
    }

    // An edit is a function the pass cache cannot compare: an edited pass is never the clean
    // one, nor the clean one the edited, and each edit point reruns from its layer.
    void passCacheRerunsEditedLayers() {
        const std::unique_ptr<Backend> backend = makeCpuBackend();
        const auto model = loadModel((kEditModels + "gpt2_plain").toStdString(), *backend);
        KvCache cache;
        const ModelInput input{{57, 88, 89, 549}, {}, {}};
        CaptureRequest capture;
        capture.probabilities = false;
        capture.logits = true;
        const auto logits = [&](KvCache* cached, const variants::Intervention& intervention) {
            const Trace trace =
                cached ? model->forwardCached(*cached, input, capture, {}, intervention)
                       : model->forward(input, capture, {}, intervention);
            return std::vector<float>(trace.logits.values().begin(), trace.logits.values().end());
        };
        // Not a constant row, which the final LayerNorm would take out again.
        Tensor ramp({32});
        for (std::size_t i = 0; i < ramp.size(); ++i)
            ramp.data()[i] = 0.1f * float(i);
        const auto editAt = [&ramp](int layer) {
            variants::Intervention intervention;
            intervention.edits = {analysis::steeringEdit(ramp, 4.0f, layer, "v")};
            return intervention;
        };
        const std::vector<float> clean = logits(nullptr, {});
        QCOMPARE(logits(&cache, {}), clean);
        for (int layer : {3, 1, 3}) {
            const std::vector<float> edited = logits(nullptr, editAt(layer));
            QVERIFY(edited != clean);
            QCOMPARE(logits(&cache, editAt(layer)), edited);
        }
        QCOMPARE(logits(&cache, {}), clean);
    }

    void ggufReaderRefusesHostileFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        const QByteArray good = ggufOf("direction.1", 8);
        QTest::newRow("not gguf") << QByteArray("GGML....") << "t.gguf: not a GGUF file";
        QTest::newRow("truncated header")
            << good.left(20) << "t.gguf: truncated: the metadata count needs 8 bytes at offset 16";
        QTest::newRow("truncated data")
            << good.left(good.size() - 4)
            << "t.gguf: truncated: tensor 'direction.1' needs bytes 0 to 32 of the data section, "
               "which has 28";
        QByteArray version1 = good;
        version1[4] = 1;
        QTest::newRow("version 1") << version1 << "GGUF version 1; Headlight reads 2 and 3";
        QByteArray tensors = good;
        const uint64_t hostile = uint64_t(1) << 60;
        std::memcpy(tensors.data() + 8, &hostile, 8);
        QTest::newRow("hostile tensor count")
            << tensors << "the header counts 1152921504606846976 tensors, over the 4096 read";
        QByteArray keyValues = good;
        std::memcpy(keyValues.data() + 16, &hostile, 8);
        QTest::newRow("hostile metadata count")
            << keyValues << "1152921504606846976 metadata entries, over the 4096 read";
        QByteArray key = good;
        std::memcpy(key.data() + 24, &hostile, 8);
        QTest::newRow("hostile string length")
            << key << "a metadata key is 1152921504606846976 bytes long, over the 1048576 read";
        QTest::newRow("quantised tensor")
            << ggufOf("direction.1", 32, 2)
            << "tensor 'direction.1' has ggml type 2; Headlight reads F32 (0) and F16 (1) "
               "tensors only";
    }

    void ggufReaderRefusesHostileFiles() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        const QString refusal = ggufRefusal(bytes);
        QVERIFY2(refusal.contains(reason), qPrintable(refusal));
    }

    void ggufReaderReadsF32AndF16() {
        const io::GgufFile f32 =
            io::readGguf((kEditData + "control_gpt2_plain.gguf").toStdString());
        QCOMPARE(f32.version, 3u);
        QCOMPARE(QString::fromStdString(f32.strings.at("controlvector.model_hint")),
                 QStringLiteral("gpt2_plain"));
        QCOMPARE(f32.tensors.size(), std::size_t(2));
        QCOMPARE(f32.tensors[1].name, std::string("direction.2"));
        QCOMPARE(f32.tensors[1].values.shape(), (std::vector<int64_t>{32}));
        const QByteArray half = ggufOf("direction.1", 4, 1);
        const io::GgufFile f16 = io::parseGguf(
            std::as_bytes(std::span(half.constData(), std::size_t(half.size()))), "half.gguf");
        QCOMPARE(f16.tensors.front().values.size(), std::size_t(4));
    }

    void controlVectorNamesAreChecked() {
        const auto directionsOf = [](const QByteArray& bytes) {
            try {
                io::controlVectorDirections(
                    io::parseGguf(
                        std::as_bytes(std::span(bytes.constData(), std::size_t(bytes.size()))),
                        "c.gguf"),
                    "c.gguf");
                return QStringLiteral("no refusal");
            } catch (const std::exception& error) {
                return QString(error.what());
            }
        };
        QVERIFY(directionsOf(ggufOf("direction.0", 4)).contains("blocks from 1"));
        QVERIFY(directionsOf(ggufOf("weights", 4)).contains("is not a control vector direction"));
    }

    // A scene records the edits and reads them back unchanged; a clamp without a splice is
    // refused naming the key.
    void scenarioKeepsTheEdits() {
        io::Scenario scenario;
        scenario.model = "gpt2_plain";
        scenario.text = "x";
        scenario.view = "attention";
        scenario.edits = {{"sae/gpt2_plain_standard_pre0",
                           {{{3, 0.0f}}, {{7, 2.5f}}, analysis::SaeSplice::WithError},
                           {},
                           1.0f},
                          {{}, {}, "control.gguf", -1.5f}};
        const QJsonObject json = io::scenarioToJson(scenario);
        const io::SceneVocabulary vocabulary{{"attention"}, {"viridis"}};
        io::SceneFields fields(json, "scene", "");
        const io::Scenario back = io::scenarioFromJson(fields, vocabulary);
        fields.finish();
        QVERIFY(back == scenario);
        QVERIFY(!io::scenarioToJson(io::Scenario{}).contains("edits"));

        QJsonObject clampOnly = json;
        clampOnly["edits"] = QJsonArray{QJsonObject{
            {"sae", "s"}, {"clamp", QJsonArray{QJsonObject{{"feature", 1}, {"value", 0}}}}}};
        io::SceneFields refused(clampOnly, "scene", "");
        try {
            io::scenarioFromJson(refused, vocabulary);
            QFAIL("no refusal");
        } catch (const io::SceneError& error) {
            QVERIFY2(QString(error.what()).contains("'edits[0].splice' is none"), error.what());
        }
    }

    // `headlight export --scene` runs the scene's edits (named relative to the scene file), and
    // refuses one whose file it cannot read.
    void exportedSceneAppliesTheEdits() {
        QDir().mkpath(dir_.filePath("scenes"));
        QVERIFY(QFile::copy(kEditData + "control_gpt2_plain.gguf",
                            dir_.filePath("scenes/control.gguf")));
        const auto exported = [&](const QString& name, const QJsonArray& edits) {
            QJsonObject scene{{"model", gpt2_},
                              {"text", "57 88 89 549 85 301"},
                              {"view", "heatmap"},
                              {"selection", QJsonObject{{"layer", 2}, {"head", 1}}}};
            if (!edits.isEmpty()) scene["edits"] = edits;
            QFile file(dir_.filePath("scenes/" + name + ".json"));
            if (!file.open(QIODevice::WriteOnly)) return test::CliResult{};
            file.write(QJsonDocument(scene).toJson());
            file.close();
            return test::runHeadlight({"export", "--scene", file.fileName(), "--backend", "cpu",
                                       "--out", dir_.filePath(name + ".png")});
        };
        // The pixels: the file's provenance names the edits even where they changed nothing.
        const auto pixels = [&](const QString& name) {
            return QImage(dir_.filePath(name + ".png"));
        };
        const test::CliResult clean = exported("clean", {});
        QVERIFY2(clean.exitCode == 0, qPrintable(clean.err));
        const test::CliResult steered = exported(
            "steered", {QJsonObject{{"steering_vector", "control.gguf"}, {"strength", 4.0}}});
        QVERIFY2(steered.exitCode == 0, qPrintable(steered.err));
        QVERIFY(!pixels("clean").isNull() && pixels("clean") != pixels("steered"));
        // The caption says so on the figure's face, beside the variant.
        const test::CliResult svg =
            test::runHeadlight({"export", "--scene", dir_.filePath("scenes/steered.json"),
                                "--backend", "cpu", "--out", dir_.filePath("steered.svg")});
        QVERIFY2(svg.exitCode == 0, qPrintable(svg.err));
        const QString drawn = QString::fromUtf8(test::readFile(dir_.filePath("steered.svg")));
        QVERIFY2(drawn.contains(
                     QStringLiteral("Variant: as trained + steering vector control.gguf × 4")),
                 qPrintable(drawn.left(400)));

        const test::CliResult missing =
            exported("missing", {QJsonObject{{"steering_vector", "nowhere.gguf"}}});
        QVERIFY(missing.exitCode != 0);
        QVERIFY2(missing.err.contains("nowhere.gguf"), qPrintable(missing.err));
    }

    void spliceAndClampParse() {
        QCOMPARE(analysis::parseFeatureValue("--clamp", "12=-0.5"),
                 (analysis::FeatureValue{12, -0.5f}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 analysis::parseFeatureValue("--clamp", "-1=0"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 analysis::parseFeatureValue("--clamp", "3"));
        QCOMPARE(analysis::saeSpliceFromName("no-error"), analysis::SaeSplice::NoError);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestResidualEdits)
#include "test_residual_edits.moc"
