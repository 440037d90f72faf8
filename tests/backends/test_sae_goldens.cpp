// Sparse autoencoders on each backend against tools/golden/make_sae_goldens.py (float64 PyTorch
// written from SAELens's inference classes, on the residual stream of models_ref.py's reference
// passes): the SAELens folders of tests/data/sae, in the 6.x and the flat cfg layout, standard,
// JumpReLU, TopK (with and without the decoder-norm rescale) and gated, every normalisation with
// a factor, hooks at the first, a middle and the last block (whose resid_post comes before the
// final norm); Llama Scope; Gemma Scope 1 (params.npz: resid_post, the last block's mlp_out after
// Gemma 2's post-FFN norm, attn.hook_z) and Gemma Scope 2 (params.safetensors with Hugging Face
// hook names: resid_post at the last block, o_proj's input, and a transcoder with an affine skip
// from the MLP's normed input to its post-normed output); SAELens SAEs at hook_attn_out and
// hook_resid_mid. The hook's activations, the feature activations, the reconstruction (and a
// transcoder's target) agree within 1e-4, and exactly the same features fire (the goldens keep
// every pre-activation more than 1e-3 from its threshold). The zoo's own SAEs (resources/saes,
// tools/train_sae/train_sae.py) are checked the same way on their zoo models.
#include "analysis/sae_hook.h"
#include "analysis/sparse_autoencoder.h"
#include "backend_fixture.h"
#include "compare.h"
#include "golden_json.h"
#include "io/sae_folder.h"
#include "io/safetensors.h"
#include "model/transformer.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

using namespace headlight;

namespace {

constexpr double kSaeTolerance = 1e-4;
const QString kSaeData = QStringLiteral(HEADLIGHT_TEST_DATA "/sae/");

QJsonObject saeGolden() {
    return test::readJsonObject(kSaeData + "golden.json");
}

// The zoo's SAEs (resources/saes) against tools/train_sae/train_sae.py's goldens.
QJsonObject zooSaeGolden() {
    return test::readJsonObject(QStringLiteral(HEADLIGHT_TEST_DATA "/zoo_sae/golden.json"));
}

std::vector<int32_t> saeGoldenIds() {
    return test::idsOf(saeGolden()["ids"]);
}

// One pass of `ids` captured for `hookName`, and its activations there.
Tensor saeActivations(const TransformerModel& model, const std::string& hookName,
                      const std::vector<int32_t>& ids = saeGoldenIds()) {
    const ModelSpec& spec = model.spec();
    const analysis::SaeHook hook =
        analysis::parseSaeHook(hookName, spec.layers, spec.sandwichNorms);
    const Trace trace =
        model.forward(ModelInput{ids, {}, {}}, analysis::captureForHook(hook, spec.layers));
    return analysis::activationsAtHook(trace, hook, spec.layers);
}

// Features that fire (≠ 0), as flat indices.
std::vector<std::size_t> saeFiring(const Tensor& features) {
    std::vector<std::size_t> firing;
    for (std::size_t i = 0; i < features.size(); ++i)
        if (features.data()[i] != 0.0f) firing.push_back(i);
    return firing;
}
} // namespace

class TestSaeGoldens : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

    // The hook's activations, the features (and which fire), the reconstruction and its quality
    // against a golden case and its expected tensors.
    void compareWithExpected(const analysis::SaeEncoding& encoding,
                             const io::SafetensorsFile& expected, const QJsonObject& goldenCase) {
        QString where;
        const double inputDiff =
            test::maxAbsDiff(encoding.input, expected.loadF32("sae_in"), &where);
        QVERIFY2(inputDiff <= kSaeTolerance, qPrintable("sae_in: " + where));
        const Tensor wantFeatures = expected.loadF32("feature_acts");
        const double featureDiff = test::maxAbsDiff(encoding.features, wantFeatures, &where);
        QVERIFY2(featureDiff <= kSaeTolerance, qPrintable("feature_acts: " + where));
        const double outputDiff =
            test::maxAbsDiff(encoding.output, expected.loadF32("sae_out"), &where);
        QVERIFY2(outputDiff <= kSaeTolerance, qPrintable("sae_out: " + where));
        const std::vector<std::size_t> firing = saeFiring(encoding.features);
        QCOMPARE(firing, saeFiring(wantFeatures));
        QCOMPARE(int(firing.size()), goldenCase["firing"].toInt());
        qInfo(
            "%s on %s: max |diff| sae_in %.3g, feature_acts %.3g, sae_out %.3g; %zu features fire",
            qPrintable(goldenCase["name"].toString()), fixture_.cliName(), inputDiff, featureDiff,
            outputDiff, firing.size());

        const analysis::ReconstructionQuality quality = analysis::reconstructionQuality(encoding);
        QVERIFY(std::abs(quality.varianceExplained - goldenCase["variance_explained"].toDouble()) <=
                kSaeTolerance);
        QVERIFY(std::abs(quality.meanSquaredError - goldenCase["mse"].toDouble()) <= kSaeTolerance);
        QCOMPARE(quality.meanL0, goldenCase["l0"].toDouble());
    }

public:
    explicit TestSaeGoldens(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void featuresMatchTheReference_data() {
        QTest::addColumn<QJsonObject>("goldenCase");
        const QJsonArray cases = saeGolden()["cases"].toArray();
        QCOMPARE(cases.size(), 15);
        for (const QJsonValue& c : cases)
            QTest::newRow(qPrintable(c.toObject()["name"].toString())) << c.toObject();
    }

    void featuresMatchTheReference() {
        QFETCH(QJsonObject, goldenCase);
        const std::string name = goldenCase["name"].toString().toStdString();
        const QString folderName = goldenCase.contains("folder") ? goldenCase["folder"].toString()
                                                                 : goldenCase["name"].toString();
        const io::SaeFolder folder =
            io::readSaeFolder(kSaeData.toStdString() + folderName.toStdString());
        QCOMPARE(QString::fromStdString(folder.config.layout), goldenCase["layout"].toString());
        QCOMPARE(QString(analysis::saeArchitectureName(folder.config.architecture)),
                 goldenCase["architecture"].toString());
        QCOMPARE(QString::fromStdString(folder.config.hookName), goldenCase["hook"].toString());
        QVERIFY(folder.notes.empty());

        const auto model =
            loadModel(HEADLIGHT_TEST_DATA "/models/" + goldenCase["model"].toString().toStdString(),
                      fixture_.backend());
        analysis::SaeEncoding encoding =
            analysis::encodeAndDecode(folder.sae, saeActivations(*model, folder.config.hookName));
        const io::SafetensorsFile expected(kSaeData.toStdString() + "expected/" + name +
                                           ".safetensors");
        QString where;
        QCOMPARE(QString::fromStdString(folder.config.hookOutName),
                 goldenCase["hook_out"].toString());
        if (!folder.config.hookOutName.empty()) { // a transcoder, against its output hook
            encoding.target = saeActivations(*model, folder.config.hookOutName);
            const double targetDiff =
                test::maxAbsDiff(encoding.target, expected.loadF32("sae_target"), &where);
            QVERIFY2(targetDiff <= kSaeTolerance, qPrintable("sae_target: " + where));
        }
        compareWithExpected(encoding, expected, goldenCase);
    }

    // The zoo's SAEs, as shipped in SAELens's folder layout, on their zoo models.
    void zooSaesMatchTheReference_data() {
        QTest::addColumn<QJsonObject>("goldenCase");
        const QJsonArray cases = zooSaeGolden()["cases"].toArray();
        QCOMPARE(cases.size(), 2);
        for (const QJsonValue& c : cases)
            QTest::newRow(qPrintable(c.toObject()["name"].toString())) << c.toObject();
    }

    void zooSaesMatchTheReference() {
        QFETCH(QJsonObject, goldenCase);
        const std::string source = HEADLIGHT_SOURCE_DIR "/";
        const io::SaeFolder folder =
            io::readSaeFolder(source + goldenCase["sae"].toString().toStdString());
        QCOMPARE(QString::fromStdString(folder.config.hookName), goldenCase["hook"].toString());
        QCOMPARE(QString(analysis::saeArchitectureName(folder.config.architecture)),
                 goldenCase["architecture"].toString());
        const auto model =
            loadModel(source + goldenCase["model"].toString().toStdString(), fixture_.backend());
        const Tensor activations =
            saeActivations(*model, folder.config.hookName, test::idsOf(goldenCase["ids"]));
        const io::SafetensorsFile expected(std::string(HEADLIGHT_TEST_DATA "/zoo_sae/expected/") +
                                           goldenCase["name"].toString().toStdString() +
                                           ".safetensors");
        compareWithExpected(analysis::encodeAndDecode(folder.sae, activations), expected,
                            goldenCase);
    }

    // On a pre-norm model without Gemma's output norms (Qwen2), the sub-layer hooks add up as the
    // block does: resid_pre + attn_out = resid_mid, resid_mid + mlp_out = resid_post.
    void sublayerHooksAddUp() {
        const auto model = loadModel(HEADLIGHT_TEST_DATA "/models/qwen2", fixture_.backend());
        const auto at = [&](const char* hook) { return saeActivations(*model, hook); };
        for (int layer : {0, 1}) {
            const std::string block = "blocks." + std::to_string(layer) + ".";
            const Tensor pre = at((block + "hook_resid_pre").c_str());
            const Tensor mid = at((block + "hook_resid_mid").c_str());
            const Tensor attention = at((block + "hook_attn_out").c_str());
            const Tensor mlp = at((block + "hook_mlp_out").c_str());
            const Tensor post = at((block + "hook_resid_post").c_str());
            Tensor sum = pre;
            for (std::size_t i = 0; i < sum.size(); ++i)
                sum.data()[i] += attention.data()[i];
            QVERIFY(test::maxAbsDiff(sum, mid) <= 1e-5);
            for (std::size_t i = 0; i < sum.size(); ++i)
                sum.data()[i] += mlp.data()[i];
            QVERIFY(test::maxAbsDiff(sum, post) <= 1e-5);
            QVERIFY(test::differsBy(mid, pre, 0.1));
            // Llama's post_attention_layernorm is the MLP's input norm: not attention's output
            const Tensor mlpIn =
                at(("model.layers." + std::to_string(layer) + ".post_attention_layernorm.output")
                       .c_str());
            QVERIFY(test::differsBy(mlpIn, attention, 0.1));
        }
    }

    // The trap: the last block's hook_resid_post is its output before the final norm, which the
    // trace's last hidden state is not.
    void lastResidPostIsBeforeTheFinalNorm() {
        const auto model = loadModel(HEADLIGHT_TEST_DATA "/models/gpt2_plain", fixture_.backend());
        const analysis::SaeHook hook = analysis::parseSaeHook("blocks.2.hook_resid_post", 3);
        CaptureRequest capture = analysis::captureForHook(hook, 3);
        capture.hiddenStates = true;
        const Trace trace = model->forward(ModelInput{saeGoldenIds(), {}, {}}, capture);
        const Tensor before = analysis::activationsAtHook(trace, hook, 3);
        QVERIFY(test::differsBy(before, trace.hiddenStates[3], 1.0));
        QCOMPARE(test::maxAbsDiff(trace.hiddenStates[3], trace.lastHiddenState), 0.0);
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestSaeGoldens)
#include "test_sae_goldens.moc"
