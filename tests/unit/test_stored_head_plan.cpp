// An untied LM head stays in its mapped file in the stored dtype, as the token embedding does
// (HostLmHead::stored, uploaded with Backend::uploadStored): a BF16 head [V, D] takes V · D · 2
// bytes, never a widened f32 copy. The memory plans count it so, and count as f32 what the
// encoder layout does widen (the embedding tables of BERT and its kin,
// ModelFamily::widenedMatrices): `headlight info` (the CPU plan) and deviceLoadBytes (the
// Vulkan plan), each against bytes worked out here from the file's shapes and dtypes.
// test_vulkan_weights_16bit holds the device plan to what a Vulkan load allocates, and
// test_stored_dtype_models the logits of the mapped head to those of its f32 twin.
#include "backend/backend.h"
#include "cli_runner.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/checkpoint_layout.h"
#include "model/memory_budget.h"
#include "model/transformer.h"
#include "rounded_twins.h"
#include "temp_files.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <set>
#include <string>

using namespace headlight;

namespace {

// What the plans should say of a checkpoint whose 2-D float tensors stay mapped except
// `widenedTables`: the mapped tensors' stored bytes, the others' f32 bytes, and the largest
// tensor as the device holds it (16-bit matrices rounded up to whole 32-bit words).
struct ExpectedBytes {
    double mapped = 0.0;
    double mappedOnDevice = 0.0;
    double widened = 0.0;
    double largestOnDevice = 0.0;
    double deviceLoad() const { return mappedOnDevice + widened + largestOnDevice; }
};

ExpectedBytes expectedOf(const io::Checkpoint& checkpoint,
                         const std::set<std::string>& widenedTables) {
    ExpectedBytes bytes;
    for (const std::string& name : checkpoint.names()) {
        const io::TensorInfo& info = checkpoint.info(name);
        const double elements = double(elementCount(info.shape));
        double onDevice = elements * 4.0;
        if (info.shape.size() == 2 && !widenedTables.contains(name)) {
            const double stored = elements * double(io::dtypeSize(info.dtype));
            bytes.mapped += stored;
            onDevice = std::ceil(stored / 4.0) * 4.0;
            bytes.mappedOnDevice += onDevice;
        } else {
            bytes.widened += onDevice;
        }
        bytes.largestOnDevice = std::max(bytes.largestOnDevice, onDevice);
    }
    return bytes;
}

QJsonObject infoJson(const QString& folder) {
    const test::CliResult run = test::runHeadlight({"info", "--model", folder, "--json"});
    if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
    return QJsonDocument::fromJson(run.out.toUtf8()).object();
}

// bert_mlm (F16, tied) rewritten untied: its decoder.weight a copy of the word embeddings, so
// that its logits must equal the tied model's. Returns the new folder.
QString untiedBertMlm(test::ScratchDir& scratch) {
    const QString golden = test::goldenRoot() + "/bert_mlm";
    const io::Checkpoint tied(golden.toStdString());
    std::vector<io::TensorToWrite> tensors;
    for (const std::string& name : tied.names()) {
        const io::TensorInfo& info = tied.info(name);
        tensors.push_back({name, info.shape, {}, {}, info.dtype, tied.storedBytes(name)});
    }
    const std::string words = "bert.embeddings.word_embeddings.weight";
    tensors.push_back({"cls.predictions.decoder.weight",
                       tied.info(words).shape,
                       {},
                       {},
                       tied.info(words).dtype,
                       tied.storedBytes(words)});
    const QString folder = scratch.freshFolder();
    io::writeSafetensors((folder + "/model.safetensors").toStdString(), tensors);
    QFile in(golden + "/config.json");
    if (!in.open(QIODevice::ReadOnly)) return {};
    QJsonObject config = QJsonDocument::fromJson(in.readAll()).object();
    config.insert("tie_word_embeddings", false);
    QFile out(folder + "/config.json");
    if (!out.open(QIODevice::WriteOnly)) return {};
    out.write(QJsonDocument(config).toJson());
    return folder;
}

Tensor logitsOf(const QString& folder, const ModelInput& input) {
    const auto backend = makeCpuBackend();
    const auto model = loadModel(folder.toStdString(), *backend);
    CaptureRequest capture;
    capture.logits = true;
    return model->forward(input, capture).logits;
}

// The three tables readEncoderWeights widens, under `prefix`.
std::set<std::string> encoderTables(const std::string& prefix) {
    return {prefix + "embeddings.word_embeddings.weight",
            prefix + "embeddings.position_embeddings.weight",
            prefix + "embeddings.token_type_embeddings.weight"};
}
} // namespace

class TestStoredHeadPlan : public QObject {
    Q_OBJECT
    test::ScratchDir scratch_;

private Q_SLOTS:
    void untiedBf16HeadStaysMapped_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("head");
        QTest::newRow("llama lm_head") << "llama"
                                       << "lm_head.weight";
        QTest::newRow("gpt_neox embed_out") << "gpt_neox"
                                            << "embed_out.weight";
    }

    void untiedBf16HeadStaysMapped() {
        QFETCH(QString, model);
        QFETCH(QString, head);
        const QString folder =
            test::writeRoundedTwins(test::goldenRoot() + "/" + model, io::DType::BF16, scratch_)
                .first;
        const io::Checkpoint checkpoint(folder.toStdString());
        const ModelSpec spec = loadModelConfig(folder.toStdString());
        const HostWeights weights = readWeights(checkpoint, spec);
        const HostLmHead& lmHead = weights.lmHead;
        QCOMPARE(lmHead.kind, HostLmHead::Kind::Untied);
        QVERIFY(lmHead.weight.empty()); // no f32 copy
        QVERIFY(lmHead.stored.valid());
        QCOMPARE(lmHead.stored.dtype, io::DType::BF16);
        QCOMPARE(lmHead.stored.shape(), (std::vector<int64_t>{spec.vocabSize, spec.hidden}));
        QCOMPARE(lmHead.stored.storedBytes(), double(spec.vocabSize) * double(spec.hidden) * 2.0);
        // The bytes are the file's own, where the checkpoint maps the tensor.
        QCOMPARE(lmHead.stored.bytes, checkpoint.mappedMatrix(head.toStdString()).bytes);
    }

    // An untied BertForMaskedLM's decoder stays mapped too, and gives the tied model's logits
    // when it holds the word embeddings.
    void untiedBertDecoderStaysMapped() {
        const QString folder = untiedBertMlm(scratch_);
        QVERIFY(!folder.isEmpty());
        const ModelSpec spec = loadModelConfig(folder.toStdString());
        QVERIFY(!spec.tieEmbeddings);
        const HostLmHead head = readWeights(io::Checkpoint(folder.toStdString()), spec).lmHead;
        QCOMPARE(head.kind, HostLmHead::Kind::MaskedLm);
        QVERIFY(head.weight.empty());
        QCOMPARE(head.stored.dtype, io::DType::F16);
        QCOMPARE(head.stored.storedBytes(), double(spec.vocabSize) * double(spec.hidden) * 2.0);

        const test::GoldenCase golden = test::goldenCaseOf("bert_mlm");
        const ModelInput input =
            test::goldenInput(io::SafetensorsFile(golden.tensorsPath().toStdString()));
        const Tensor untied = logitsOf(folder, input), tied = logitsOf(golden.folder, input);
        QCOMPARE(untied.shape(), (std::vector<int64_t>{int64_t(input.ids.size()), spec.vocabSize}));
        QString where;
        QVERIFY2(test::maxAbsDiff(untied, tied, &where) <= test::kGoldenTolerance,
                 qPrintable("logits " + where));
    }

    // `info` on an untied BF16 checkpoint: the head among the mapped bytes at V · D · 2, every
    // other matrix too; the norms widened and held twice while the CPU backend copies them.
    void infoPlansTheUntiedHeadAtItsStoredBytes() {
        const QString folder =
            test::writeRoundedTwins(test::goldenRoot() + "/llama", io::DType::BF16, scratch_).first;
        const io::Checkpoint checkpoint(folder.toStdString());
        const ModelSpec spec = loadModelConfig(folder.toStdString());
        const double head = double(spec.vocabSize) * double(spec.hidden) * 2.0;
        QCOMPARE(checkpoint.info("lm_head.weight").shape,
                 (std::vector<int64_t>{spec.vocabSize, spec.hidden}));
        const ExpectedBytes expected = expectedOf(checkpoint, {});
        QVERIFY(expected.mapped > head);

        const QJsonObject plan = infoJson(folder);
        QCOMPARE(plan["mapped_bytes"].toDouble(), expected.mapped);
        QCOMPARE(plan["widened_bytes"].toDouble(), 2.0 * expected.widened);
        QCOMPARE(deviceLoadBytes(checkpoint, spec, true), expected.deviceLoad());

        // A tied checkpoint stores no head: nothing is counted for one.
        const QString headless =
            test::writeRoundedTwins(test::goldenRoot() + "/qwen3", io::DType::BF16, scratch_).first;
        const io::Checkpoint tied(headless.toStdString());
        QVERIFY(!tied.contains("lm_head.weight"));
        QCOMPARE(infoJson(headless)["mapped_bytes"].toDouble(), expectedOf(tied, {}).mapped);
    }

    // BERT's layout widens its three embedding tables to f32: both plans count them as f32
    // (held twice on the CPU while loading), with and without the "bert." prefix of a task
    // head's checkpoint, in BF16 and in F16.
    void bertPlansCountTheWidenedTables_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("prefix");
        QTest::newRow("bert BF16") << "bert"
                                   << "";
        QTest::newRow("bert_mlm F16, bert.") << "bert_mlm"
                                             << "bert.";
    }

    void bertPlansCountTheWidenedTables() {
        QFETCH(QString, folder);
        QFETCH(QString, prefix);
        const QString golden = test::goldenRoot() + "/" + folder;
        const QString stored =
            prefix.isEmpty() ? test::writeRoundedTwins(golden, io::DType::BF16, scratch_).first
                             : golden; // bert_mlm is stored in F16
        const io::Checkpoint checkpoint(stored.toStdString());
        const ModelSpec spec = loadModelConfig(stored.toStdString());
        const std::set<std::string> tables = encoderTables(prefix.toStdString());
        double tableBytes = 0.0;
        for (const std::string& name : tables) {
            const io::TensorInfo& info = checkpoint.info(name); // all three are there
            QCOMPARE(info.dtype, prefix.isEmpty() ? io::DType::BF16 : io::DType::F16);
            tableBytes += double(elementCount(info.shape)) * 4.0;
        }
        const ExpectedBytes expected = expectedOf(checkpoint, tables);
        QCOMPARE(expected.widened - tableBytes, expectedOf(checkpoint, {}).widened);

        QCOMPARE(deviceLoadBytes(checkpoint, spec, true), expected.deviceLoad());
        const WeightBytes weights = weightBytes(checkpoint, spec);
        QCOMPARE(weights.mapped, expected.mapped);
        QCOMPARE(weights.widened, expected.widened);
        const QJsonObject plan = infoJson(stored);
        QCOMPARE(plan["mapped_bytes"].toDouble(), expected.mapped);
        QCOMPARE(plan["widened_bytes"].toDouble(), 2.0 * expected.widened);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestStoredHeadPlan)
#include "test_stored_head_plan.moc"
