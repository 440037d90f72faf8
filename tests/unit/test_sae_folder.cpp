// SAELens SAE folders that Headlight refuses, each in one line naming the file and the problem:
// cfg.json missing, not JSON, or asking for an architecture, activation, normalisation or hook
// shape it does not compute; weights missing, of a shape other than d_in and d_sae make them,
// not finite, truncated or hostile (the hardened safetensors reader); a fine-tuning scale other
// than ones. Hooks the trace cannot give are refused naming the supported ones. A folder whose
// cfg asks for expected_average_only_in without a stored factor is read with a note saying so;
// a hand-computed SAE checks the encoder's arithmetic on numbers small enough to follow.
#include "analysis/sae_hook.h"
#include "analysis/sparse_autoencoder.h"
#include "io/sae_folder.h"
#include "io/safetensors.h"
#include "temp_files.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <limits>

using namespace headlight;

namespace {

constexpr const char* kSaeCfg6 = R"({"architecture": "standard", "d_in": 2, "d_sae": 3,
  "apply_b_dec_to_input": true, "normalize_activations": "none",
  "metadata": {"sae_lens_version": "6.18.0", "hook_name": "blocks.0.hook_resid_post"}})";

std::vector<io::TensorToWrite> saeTensors(int dIn = 2, int dSae = 3) {
    const auto filled = [](int64_t n, float base) {
        std::vector<float> v(static_cast<std::size_t>(n));
        for (int64_t i = 0; i < n; ++i)
            v[std::size_t(i)] = base + 0.5f * float(i);
        return v;
    };
    return {{"W_enc", {dIn, dSae}, filled(dIn * dSae, -1.0f), {}, {}, {}},
            {"W_dec", {dSae, dIn}, filled(dIn * dSae, 0.25f), {}, {}, {}},
            {"b_enc", {dSae}, filled(dSae, 0.1f), {}, {}, {}},
            {"b_dec", {dIn}, filled(dIn, -0.2f), {}, {}, {}}};
}

class SaeScratch {
public:
    QString folder(const QByteArray& cfg, const std::vector<io::TensorToWrite>& tensors) {
        const QString path = dir_.filePath(QString::number(++count_));
        QDir().mkpath(path);
        if (!cfg.isEmpty()) test::writeFile(path + "/cfg.json", cfg);
        if (!tensors.empty())
            io::writeSafetensors((path + "/sae_weights.safetensors").toStdString(), tensors);
        return path;
    }

private:
    QTemporaryDir dir_;
    int count_ = 0;
};

QString saeRefusal(const QString& folder) {
    try {
        io::readSaeFolder(folder.toStdString());
    } catch (const io::SaeFolderError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(read without a refusal)");
}

QByteArray saeCfgWith(const char* from, const char* to) {
    QByteArray cfg(kSaeCfg6);
    cfg.replace(from, to);
    return cfg;
}
} // namespace

class TestSaeFolder : public QObject {
    Q_OBJECT
    SaeScratch scratch_;

private Q_SLOTS:
    void refusesInOneLine_data() {
        QTest::addColumn<QByteArray>("cfg");
        QTest::addColumn<int>("tensorsKind"); // 0 good, 1 wrong shape, 2 NaN, 3 none
        QTest::addColumn<QString>("reason");
        QTest::newRow("no cfg") << QByteArray() << 0 << "has no cfg.json";
        QTest::newRow("garbled") << QByteArray("{\"d_in\": 2,") << 0 << "cfg.json: not JSON (";
        QTest::newRow("not an object")
            << QByteArray("[1, 2]") << 0 << "cfg.json: not a JSON object";
        QTest::newRow("architecture") << saeCfgWith("\"standard\"", "\"skip_transcoder\"") << 0
                                      << "architecture 'skip_transcoder' is not one Headlight "
                                         "computes (standard, jumprelu, topk, gated)";
        QTest::newRow("no architecture") << saeCfgWith("\"architecture\": \"standard\",", "") << 0
                                         << "(SAELens 6.x) names no architecture";
        QTest::newRow("d_in") << saeCfgWith("\"d_in\": 2", "\"d_in\": 2.5") << 0
                              << "d_in is 2.5, not a positive integer";
        QTest::newRow("normalisation") << saeCfgWith("\"none\"", "\"batch_norm\"") << 0
                                       << "normalize_activations is 'batch_norm', not none";
        QTest::newRow("no hook") << saeCfgWith("\"hook_name\"", "\"hook\"") << 0
                                 << "names no hook (metadata.hook_name, hook_name or hook_point)";
        QTest::newRow("head index")
            << saeCfgWith("\"hook_name\"", "\"hook_head_index\": 3, \"hook_name\"") << 0
            << "hook_head_index is 3: SAEs of one attention head are not supported";
        QTest::newRow("flat activation")
            << QByteArray(R"({"d_in": 2, "d_sae": 3, "hook_name": "blocks.0.hook_resid_pre",
                             "activation_fn_str": "tanh-relu"})")
            << 0 << "activation_fn_str 'tanh-relu' is not one Headlight computes (relu, topk)";
        QTest::newRow("flat topk without k")
            << QByteArray(R"({"d_in": 2, "d_sae": 3, "hook_name": "blocks.0.hook_resid_pre",
                             "activation_fn_str": "topk", "activation_fn_kwargs": {}})")
            << 0 << "activation_fn_str is topk but activation_fn_kwargs gives no k";
        QTest::newRow("k too large") << saeCfgWith("\"standard\"", "\"topk\", \"k\": 4") << 0
                                     << "k is 4, not an integer from 1 to d_sae (3)";
        QTest::newRow("wrong shape") << QByteArray(kSaeCfg6) << 1
                                     << "'W_enc' is [3, 3], not [2, 3] as d_in and "
                                        "d_sae make it";
        QTest::newRow("NaN weight") << QByteArray(kSaeCfg6) << 2
                                    << "'b_enc' holds a value that is not finite (nan at "
                                       "element 1)";
        QTest::newRow("no weights")
            << QByteArray(kSaeCfg6) << 3 << "has no sae_weights.safetensors";
        QTest::newRow("gated without b_gate")
            << saeCfgWith("\"standard\"", "\"gated\"") << 0 << "has no tensor b_gate";
    }

    void refusesInOneLine() {
        QFETCH(QByteArray, cfg);
        QFETCH(int, tensorsKind);
        QFETCH(QString, reason);
        std::vector<io::TensorToWrite> tensors = saeTensors();
        if (tensorsKind == 1) tensors = saeTensors(3, 3);
        if (tensorsKind == 2) tensors[2].f32[1] = std::numeric_limits<float>::quiet_NaN();
        if (tensorsKind == 3) tensors.clear();
        const QString message = saeRefusal(scratch_.folder(cfg, tensors));
        QVERIFY2(message.contains(reason), qPrintable(message));
        QVERIFY2(!message.contains('\n'), qPrintable(message));
    }

    // The hardened safetensors reader's refusals come through as SAE folder refusals.
    void refusesTruncatedAndHostileWeights() {
        const QString folder = scratch_.folder(kSaeCfg6, saeTensors());
        const QString weights = folder + "/sae_weights.safetensors";
        const QByteArray whole = test::readFile(weights);
        test::writeFile(weights, whole.left(whole.size() - 5));
        QString message = saeRefusal(folder);
        QVERIFY2(message.contains("sae_weights.safetensors"), qPrintable(message));
        QVERIFY2(!message.contains('\n') && !message.contains("without a refusal"),
                 qPrintable(message));
        QByteArray hostile = whole;
        hostile.replace(0, 8, test::littleEndian64(quint64(1) << 40));
        test::writeFile(weights, hostile);
        message = saeRefusal(folder);
        QVERIFY2(message.contains("sae_weights.safetensors") &&
                     !message.contains("without a refusal"),
                 qPrintable(message));
    }

    void refusesAFineTuningScaleOtherThanOnes() {
        std::vector<io::TensorToWrite> tensors = saeTensors();
        tensors.push_back({"scaling_factor", {3}, {1.0f, 1.0f, 1.0f}, {}, {}, {}});
        QVERIFY(io::readSaeFolder(scratch_.folder(kSaeCfg6, tensors).toStdString()).notes.empty());
        tensors.back().f32[2] = 2.0f;
        const QString message = saeRefusal(scratch_.folder(kSaeCfg6, tensors));
        QVERIFY2(message.contains("scaling_factor is not all ones"), qPrintable(message));
    }

    void saysWhenTheExpectedAverageFactorIsMissing() {
        const QByteArray cfg = saeCfgWith("\"none\"", "\"expected_average_only_in\"");
        const QString folder = scratch_.folder(cfg, saeTensors());
        io::SaeFolder read = io::readSaeFolder(folder.toStdString());
        QCOMPARE(read.notes.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(read.notes[0]).contains("no scaling factor"));
        QVERIFY(!read.sae.scalingFactor);
        test::writeFile(folder + "/activation_scaler.json", R"({"scaling_factor": 0.5})");
        read = io::readSaeFolder(folder.toStdString());
        QVERIFY(read.notes.empty());
        QCOMPARE(*read.sae.scalingFactor, 0.5);
        test::writeFile(folder + "/activation_scaler.json", R"({"scaling_factor": "big"})");
        QVERIFY(saeRefusal(folder).contains("scaling_factor is 'big', not a positive number"));
    }

    // Llama Scope: nn.Linear's orientation transposed, one threshold times the norm factor.
    void readsAndRefusesLlamaScope() {
        const QString folder = scratch_.folder({}, {});
        QDir().mkpath(folder + "/checkpoints");
        const auto hyper = [&](const char* extra) {
            test::writeFile(folder + "/hyperparams.json",
                            QByteArray(R"({"d_model": 2, "d_sae": 3, "act_fn": "jumprelu",
              "hook_point_in": "blocks.0.hook_resid_post", "jump_relu_threshold": 0.5,
              "dataset_average_activation_norm": {"in": 0.5, "out": 0.5})") +
                                extra + "}");
        };
        hyper("");
        std::vector<io::TensorToWrite> tensors = {
            {"encoder.weight", {3, 2}, {1, 2, 3, 4, 5, 6}, {}, {}, {}},
            {"encoder.bias", {3}, {0, 0, 0}, {}, {}, {}},
            {"decoder.weight", {2, 3}, {1, 0, 0, 0, 1, 0}, {}, {}, {}},
            {"decoder.bias", {2}, {0, 0}, {}, {}, {}}};
        io::writeSafetensors((folder + "/checkpoints/final.safetensors").toStdString(), tensors);
        const io::SaeFolder read = io::readSaeFolder(folder.toStdString());
        QCOMPARE(QString::fromStdString(read.config.layout), QString("llama-scope"));
        QCOMPARE(read.sae.wEnc.shape(), (std::vector<int64_t>{2, 3}));
        QCOMPARE(read.sae.wEnc.data()[1], 3.0f); // W_enc[0][1] = encoder.weight[1][0]
        const double s = std::sqrt(2.0) / 0.5;
        QCOMPARE(*read.sae.scalingFactor, s);
        QCOMPARE(read.sae.threshold.data()[2], float(0.5 * s));
        QVERIFY(!read.sae.applyBDecToInput);

        hyper(R"(, "hook_point_out": "blocks.0.hook_mlp_out")");
        QVERIFY2(saeRefusal(folder).contains("hook_point_out differs from hook_point_in: a "
                                             "transcoder"),
                 qPrintable(saeRefusal(folder)));
        test::writeFile(folder + "/hyperparams.json",
                        R"({"d_model": 2, "d_sae": 3, "act_fn": "topk", "hook_point_in": "x"})");
        QVERIFY(saeRefusal(folder).contains("act_fn is not jumprelu"));
        hyper("");
        tensors[0].shape = {2, 3}; // W_enc's orientation instead of nn.Linear's
        io::writeSafetensors((folder + "/checkpoints/final.safetensors").toStdString(), tensors);
        QVERIFY2(saeRefusal(folder).contains("'encoder.weight' is [2, 3], not [3, 2]"),
                 qPrintable(saeRefusal(folder)));
    }

    void refusesHooksTheTraceCannotGive_data() {
        QTest::addColumn<QString>("hook");
        QTest::addColumn<QString>("reason");
        QTest::newRow("attention pattern") << "blocks.1.attn.hook_pattern"
                                           << "which Headlight does not capture";
        QTest::newRow("embedding") << "hook_embed"
                                   << "which Headlight does not capture";
        QTest::newRow("past the last") << "blocks.3.hook_resid_post"
                                       << "but the model has 3 blocks";
        QTest::newRow("past the last, HF") << "model.layers.3.output"
                                           << "but the model has 3 blocks";
        // Gemma's norm names on a model without them (sandwichNorms false)
        QTest::newRow("no post-FFN norm") << "model.layers.1.post_feedforward_layernorm.output"
                                          << "a norm only Gemma 2 and 3 blocks have";
    }

    void refusesHooksTheTraceCannotGive() {
        QFETCH(QString, hook);
        QFETCH(QString, reason);
        try {
            analysis::parseSaeHook(hook.toStdString(), 3);
            QFAIL("no refusal");
        } catch (const std::invalid_argument& error) {
            const QString message = error.what();
            QVERIFY2(message.contains(reason), qPrintable(message));
            QVERIFY2(message.contains("the supported hooks are blocks.L.hook_resid_pre, "
                                      "hook_resid_mid, hook_resid_post, hook_attn_out, "
                                      "hook_mlp_out and blocks.L.attn.hook_z (or Gemma Scope 2's "
                                      "model.layers.L names), L from 0 to 2"),
                     qPrintable(message));
        }
    }

    // TransformerLens names and the Hugging Face module names Gemma Scope 2 gives, onto the same
    // points; post_attention_layernorm is attention's output norm on Gemma, the MLP's input norm
    // on Llama.
    void mapsHookNames_data() {
        using Point = analysis::SaeHook::Point;
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("gemma");
        QTest::addColumn<int>("point");
        QTest::addColumn<int>("layer");
        QTest::newRow("resid_mid")
            << "blocks.1.hook_resid_mid" << false << int(Point::ResidMid) << 1;
        QTest::newRow("attn_out") << "blocks.2.hook_attn_out" << false << int(Point::AttnOut) << 2;
        QTest::newRow("mlp_out") << "blocks.0.hook_mlp_out" << false << int(Point::MlpOut) << 0;
        QTest::newRow("hook_z") << "blocks.1.attn.hook_z" << false << int(Point::AttnZ) << 1;
        QTest::newRow("HF output") << "model.layers.2.output" << true << int(Point::ResidPost) << 2;
        QTest::newRow("HF o_proj input")
            << "model.layers.1.self_attn.o_proj.input" << true << int(Point::AttnZ) << 1;
        QTest::newRow("HF post-FFN norm") << "model.layers.1.post_feedforward_layernorm.output"
                                          << true << int(Point::MlpOut) << 1;
        QTest::newRow("HF pre-FFN norm")
            << "model.layers.0.pre_feedforward_layernorm.output" << true << int(Point::MlpIn) << 0;
        QTest::newRow("Gemma post-attention norm")
            << "model.layers.1.post_attention_layernorm.output" << true << int(Point::AttnOut) << 1;
        QTest::newRow("Llama post-attention norm")
            << "model.layers.1.post_attention_layernorm.output" << false << int(Point::MlpIn) << 1;
    }

    void mapsHookNames() {
        QFETCH(QString, name);
        QFETCH(bool, gemma);
        QFETCH(int, point);
        QFETCH(int, layer);
        const analysis::SaeHook hook = analysis::parseSaeHook(name.toStdString(), 3, gemma);
        QCOMPARE(int(hook.point), point);
        QCOMPARE(hook.layer, layer);
        const CaptureRequest capture = analysis::captureForHook(hook, 3);
        QVERIFY(!capture.probabilities);
        if (hook.point == analysis::SaeHook::Point::ResidPost) { // the last block's
            QVERIFY(capture.residualBeforeFinalNorm);
            return;
        }
        QCOMPARE(capture.layers, std::vector<int>{layer});
        QCOMPARE(capture.headOutputs, hook.point == analysis::SaeHook::Point::AttnZ);
        QCOMPARE(capture.sublayers, hook.point != analysis::SaeHook::Point::AttnZ);
    }

    void hookCapturesWhatItNeeds() {
        const auto pre = analysis::parseSaeHook("blocks.0.hook_resid_pre", 3);
        const auto last = analysis::parseSaeHook("blocks.2.hook_resid_post", 3);
        QVERIFY(analysis::captureForHook(pre, 3).hiddenStates);
        QVERIFY(!analysis::captureForHook(pre, 3).residualBeforeFinalNorm);
        QVERIFY(analysis::captureForHook(last, 3).residualBeforeFinalNorm);
        QVERIFY(!analysis::captureForHook(last, 3).probabilities);
    }

    // x = (1, 2), b_dec = (0.5, -0.5) subtracted: (0.5, 2.5); W_enc = [[1, -1, 2], [0, 1, -1]],
    // b_enc = (0, 0.5, 0): p = (0.5, 2.5, -1.5); standard ReLU (0.5, 2.5, 0); JumpReLU with
    // thresholds (0.5, 1, -2): 0.5 > 0.5 fails, so (0, 2.5, 0); TopK k = 1: (0, 2.5, 0).
    // W_dec = [[1, 0], [0, 2], [1, 1]]: (0, 2.5, 0)·W_dec + b_dec = (0.5, 4.5).
    void encodesByHand() {
        analysis::SparseAutoencoder sae;
        sae.dIn = 2;
        sae.dSae = 3;
        sae.wEnc = Tensor({2, 3}, {1, -1, 2, 0, 1, -1});
        sae.wDec = Tensor({3, 2}, {1, 0, 0, 2, 1, 1});
        sae.bEnc = Tensor({3}, {0, 0.5f, 0});
        sae.bDec = Tensor({2}, {0.5f, -0.5f});
        sae.threshold = Tensor({3}, {0.5f, 1, -2});
        const Tensor x({1, 2}, {1, 2});
        const auto standard = analysis::encodeAndDecode(sae, x);
        QCOMPARE(std::vector<float>(standard.features.values().begin(),
                                    standard.features.values().end()),
                 (std::vector<float>{0.5f, 2.5f, 0}));
        sae.architecture = analysis::SaeArchitecture::JumpRelu;
        const auto jump = analysis::encodeAndDecode(sae, x);
        QCOMPARE(std::vector<float>(jump.features.values().begin(), jump.features.values().end()),
                 (std::vector<float>{0, 2.5f, 0}));
        QCOMPARE(std::vector<float>(jump.output.values().begin(), jump.output.values().end()),
                 (std::vector<float>{0.5f, 4.5f}));
        sae.architecture = analysis::SaeArchitecture::TopK;
        sae.k = 1;
        const auto top = analysis::encodeAndDecode(sae, x);
        QCOMPARE(std::vector<float>(top.features.values().begin(), top.features.values().end()),
                 (std::vector<float>{0, 2.5f, 0}));
        try {
            analysis::encodeAndDecode(sae, Tensor({1, 3}, {1, 2, 3}));
            QFAIL("a width other than d_in was encoded");
        } catch (const std::invalid_argument& error) {
            QCOMPARE(QString(error.what()), QString("the SAE reads rows of width 2, not [1, 3]"));
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestSaeFolder)
#include "test_sae_folder.moc"
