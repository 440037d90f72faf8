// Hugging Face's load-time rules for tensor names, in every architecture: TensorFlow-era
// LayerNorm.gamma / LayerNorm.beta load as .weight / .bias (tools/golden/make_legacy_names.py's
// BERT checkpoints, plain with the "bert." prefix and heads, and sharded, reproduce the bert
// goldens; every golden family rewritten with legacy norm names and the keys HF ignores still
// reproduces its goldens), and any other tensor the layout does not read is refused by name.
#include "backend/backend.h"
#include "error_of.h"
#include "golden.h"
#include "io/legacy_names.h"
#include "model/model_family.h"
#include "model/transformer.h"
#include "model/unexpected_tensors.h"
#include "temp_files.h"

#include <QJsonDocument>
#include <QTest>
#include <map>

using namespace headlight;

namespace {
QString legacyRoot() {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/legacy");
}

// The norms of every golden family: BERT/RoBERTa, DistilBERT, GPT-2, the Llama family (Qwen3's
// query and key norms too), Gemma 2 and 3, OPT, GPT-NeoX, GPT-J and Phi-3.
bool isNorm(const std::string& name) {
    static const char* const kNorms[] = {"LayerNorm",
                                         "sa_layer_norm",
                                         "output_layer_norm",
                                         "ln_1",
                                         "ln_2",
                                         "ln_f",
                                         "input_layernorm",
                                         "post_attention_layernorm",
                                         "pre_feedforward_layernorm",
                                         "post_feedforward_layernorm",
                                         "q_norm",
                                         "k_norm",
                                         "self_attn_layer_norm",
                                         "norm",
                                         "final_layer_norm"};
    const std::size_t dot = name.rfind('.');
    const std::size_t before = name.rfind('.', dot - 1);
    const std::string module = name.substr(before == std::string::npos ? 0 : before + 1,
                                           dot - (before == std::string::npos ? 0 : before + 1));
    for (const char* norm : kNorms)
        if (module == norm) return true;
    return false;
}

std::string legacyName(const std::string& name) {
    if (!isNorm(name)) return name;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0)
        return name.substr(0, name.size() - 7) + ".gamma";
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0)
        return name.substr(0, name.size() - 5) + ".beta";
    return name;
}

// Keys Hugging Face drops on load, as old checkpoints and task classes save them: one entry for
// every golden model of tests/data/models (everyGoldenFamilyHasLegacyExtras fails on one missing).
const std::map<QString, std::vector<std::string>> kIgnoredExtras{
    {"bert", {"embeddings.position_ids", "cls.predictions.bias", "classifier.weight"}},
    {"bert_mlm", {"bert.embeddings.position_ids", "bert.pooler.dense.weight"}},
    {"roberta", {"embeddings.position_ids", "lm_head.dense.weight", "qa_outputs.bias"}},
    {"distilbert", {"embeddings.position_ids", "vocab_projector.bias", "pre_classifier.weight"}},
    {"gpt2", {"transformer.h.0.attn.bias", "transformer.h.1.attn.masked_bias", "lm_head.weight"}},
    {"gpt2_plain", {"h.2.attn.bias", "score.weight"}},
    {"llama", {"model.layers.0.self_attn.rotary_emb.inv_freq", "model.rotary_emb.inv_freq"}},
    {"qwen2", {"model.layers.2.self_attn.rotary_emb.inv_freq", "lm_head.weight"}},
    {"mistral", {"model.layers.1.self_attn.rotary_emb.inv_freq", "score.weight"}},
    {"gpt_neox",
     {"gpt_neox.layers.0.attention.bias", "gpt_neox.layers.1.attention.masked_bias",
      "gpt_neox.layers.0.attention.rotary_emb.inv_freq"}},
    {"gpt_neox_sequential", {"layers.1.attention.bias", "score.weight"}},
    {"gptj", {"transformer.h.0.attn.bias", "transformer.h.1.attn.masked_bias"}},
    {"phi3", {"model.layers.1.self_attn.rotary_emb.inv_freq", "model.rotary_emb.inv_freq"}},
    {"qwen3", {"model.layers.1.self_attn.rotary_emb.inv_freq", "score.weight"}},
    {"gemma2", {"model.layers.0.self_attn.rotary_emb.inv_freq", "classifier.weight"}},
    {"gemma3", {"model.rotary_emb.inv_freq", "qa_outputs.bias"}},
    {"opt", {"score.weight", "qa_outputs.weight"}},
    {"opt_post_ln", {"classifier.bias"}},
};

// The golden models of tests/data/models, each once, in folder order.
QStringList goldenModels() {
    QStringList models;
    for (const test::GoldenCase& golden : test::goldenCases())
        if (!models.contains(golden.model)) models << golden.model;
    return models;
}

// A copy of golden model `model` in one F32 file, norms under their legacy names, plus `extra`.
QString legacyCopy(test::ScratchDir& scratch, const QString& model,
                   const std::vector<std::string>& extra) {
    const QString source = test::goldenRoot() + "/" + model;
    const QString folder = scratch.freshFolder();
    for (const char* file : {"config.json", "vocab.txt", "tokenizer_config.json"})
        if (QFile::exists(source + "/" + file))
            QFile::copy(source + "/" + file, folder + "/" + file);
    const io::Checkpoint checkpoint(source.toStdString());
    std::vector<io::TensorToWrite> tensors;
    for (const std::string& name : checkpoint.names()) {
        const Tensor values = checkpoint.loadF32(name);
        tensors.push_back({legacyName(name),
                           values.shape(),
                           std::vector<float>(values.values().begin(), values.values().end()),
                           {}});
    }
    for (const std::string& name : extra)
        tensors.push_back({name, {2}, {0.5f, -0.5f}, {}});
    io::writeSafetensors((folder + "/model.safetensors").toStdString(), tensors);
    return folder;
}

// The CPU forward pass of `golden`'s input on the checkpoint in `folder` against its goldens.
void expectGoldenForward(const QString& folder, const test::GoldenCase& golden) {
    auto backend = makeCpuBackend();
    const auto model = loadModel(folder.toStdString(), *backend);
    const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
    const ModelInput input = test::goldenInput(expected);
    CaptureRequest capture;
    capture.hiddenStates = true;
    const Trace trace = model->forward(input, capture);
    QString where;
    QVERIFY2(test::maxAbsDiff(trace.stackedProbabilities(), expected.loadF32("attentions"),
                              &where) <= test::kGoldenTolerance,
             qPrintable("attentions " + where));
    QVERIFY2(test::maxAbsDiff(trace.lastHiddenState, expected.loadF32("last_hidden_state"),
                              &where) <= test::kGoldenTolerance,
             qPrintable("last_hidden_state " + where));
    const Tensor hidden = expected.loadF32("hidden_states");
    QCOMPARE(int64_t(trace.hiddenStates.size()), hidden.dim(0));
}

QString loadError(const QString& folder) {
    return test::errorOf<io::CheckpointError>([&] {
        auto backend = makeCpuBackend();
        loadModel(folder.toStdString(), *backend);
    });
}
} // namespace

class TestLegacyNames : public QObject {
    Q_OBJECT

    test::ScratchDir scratch_;

private Q_SLOTS:
    void initTestCase() { QVERIFY(scratch_.isValid()); }

    void renamesGammaAndBetaAsHuggingFace() {
        QCOMPARE(io::modernTensorName("bert.embeddings.LayerNorm.gamma"),
                 std::string("bert.embeddings.LayerNorm.weight"));
        QCOMPARE(io::modernTensorName("encoder.layer.0.output.LayerNorm.beta"),
                 std::string("encoder.layer.0.output.LayerNorm.bias"));
        QCOMPARE(io::modernTensorName("transformer.h.0.ln_1.gamma"),
                 std::string("transformer.h.0.ln_1.weight"));
        QCOMPARE(io::modernTensorName("model.norm.gamma"), std::string("model.norm.weight"));
        for (const char* unchanged : {"embeddings.LayerNorm.weight", "alphabeta.weight",
                                      "gamma_scale.bias", "betas", "gamma"})
            QCOMPARE(io::modernTensorName(unchanged), std::string(unchanged));
    }

    void legacyBertReproducesTheBertGoldens_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<int>("index");
        const auto cases = test::goldenCases();
        for (const char* folder : {"bert_gamma_beta", "bert_gamma_beta_sharded"})
            for (std::size_t i = 0; i < cases.size(); ++i)
                if (cases[i].model == "bert")
                    QTest::newRow(qPrintable(QString(folder) + "/" + cases[i].name()))
                        << legacyRoot() + "/" + folder << int(i);
    }

    void legacyBertReproducesTheBertGoldens() {
        QFETCH(QString, folder);
        QFETCH(int, index);
        const io::Checkpoint checkpoint(folder.toStdString());
        QVERIFY(!checkpoint.contains("embeddings.LayerNorm.gamma") &&
                !checkpoint.contains("bert.embeddings.LayerNorm.gamma"));
        expectGoldenForward(folder, test::goldenCases()[std::size_t(index)]);
    }

    // The family list below is the golden data's and the engine's, not this file's: every model
    // type the engine runs has a golden model, and every golden model an entry in kIgnoredExtras,
    // so that a family added to either cannot drop out of the per-family test unnoticed.
    void everyGoldenFamilyHasLegacyExtras() {
        const QStringList models = goldenModels();
        QCOMPARE(models.size(), qsizetype(18));
        QStringList goldenTypes;
        for (const QString& model : models) {
            QVERIFY2(kIgnoredExtras.count(model),
                     qPrintable(model + " has no kIgnoredExtras entry"));
            QFile config(test::goldenRoot() + "/" + model + "/config.json");
            QVERIFY(config.open(QIODevice::ReadOnly));
            goldenTypes << QJsonDocument::fromJson(config.readAll())["model_type"].toString();
        }
        QCOMPARE(kIgnoredExtras.size(), std::size_t(models.size()));
        for (const ModelFamily* family : modelFamilies())
            if (family->architecture != Architecture::Headlight)
                QVERIFY2(goldenTypes.contains(QString(family->modelType)),
                         qPrintable(QString(family->modelType) + " has no golden model"));
    }

    void everyFamilyLoadsLegacyNamesAndIgnoresWhatHuggingFaceIgnores_data() {
        QTest::addColumn<QString>("model");
        for (const QString& model : goldenModels())
            QTest::newRow(qPrintable(model)) << model;
    }

    void everyFamilyLoadsLegacyNamesAndIgnoresWhatHuggingFaceIgnores() {
        QFETCH(QString, model);
        QVERIFY2(kIgnoredExtras.count(model), qPrintable(model + " has no kIgnoredExtras entry"));
        const QString folder = legacyCopy(scratch_, model, kIgnoredExtras.at(model));
        int checked = 0;
        for (const test::GoldenCase& golden : test::goldenCases())
            if (golden.model == model && golden.name() == "punctuation") {
                expectGoldenForward(folder, golden);
                if (QTest::currentTestFailed()) return;
                ++checked;
            }
        QCOMPARE(checked, 1);
    }

    void refusesUnexpectedTensorsByName() {
        QString folder = legacyCopy(scratch_, "bert", {"encoder.layer.0.attention.self.extra"});
        QCOMPARE(loadError(folder),
                 folder + ": unexpected tensor 'encoder.layer.0.attention.self.extra', which a "
                          "bert model does not have (is this the architecture config.json "
                          "names?)");
        folder = legacyCopy(scratch_, "gpt2",
                            {"transformer.h.0.attn.bias", "transformer.h.0.attn.bogus", "h.9.x"});
        QCOMPARE(loadError(folder), folder + ": unexpected tensor 'h.9.x' and 1 more, which a gpt2 "
                                             "model does not have (is this the architecture "
                                             "config.json names?)");
        // The pooler belongs under the prefix the model uses; elsewhere it is unexpected.
        folder = legacyCopy(scratch_, "bert_mlm", {"pooler.dense.weight"});
        QVERIFY(loadError(folder).contains("unexpected tensor 'pooler.dense.weight'"));
    }

    void ignoresOnlyWhatHuggingFaceIgnores() {
        QVERIFY(ignoredOnLoad(Architecture::Bert, "bert.", "bert.pooler.dense.bias"));
        QVERIFY(ignoredOnLoad(Architecture::Bert, "bert.", "cls.seq_relationship.weight"));
        QVERIFY(!ignoredOnLoad(Architecture::Roberta, "", "cls.predictions.bias"));
        QVERIFY(ignoredOnLoad(Architecture::Gpt2, "transformer.", "transformer.h.11.attn.bias"));
        QVERIFY(!ignoredOnLoad(Architecture::Gpt2, "transformer.", "transformer.h..attn.bias"));
        QVERIFY(!ignoredOnLoad(Architecture::Gpt2, "", "h.1.attn.biases"));
        QVERIFY(ignoredOnLoad(Architecture::Mistral, "model.",
                              "model.layers.3.self_attn.rotary_emb.inv_freq"));
        QVERIFY(!ignoredOnLoad(Architecture::Llama, "model.",
                               "layers.3.self_attn.rotary_emb.inv_freq"));
        QVERIFY(!ignoredOnLoad(Architecture::Headlight, "", "lm_head.weight"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestLegacyNames)
#include "test_legacy_names.moc"
