// BERT (modeling_bert.py): post-LN encoder, learned absolute positions, token types, an
// embedding LayerNorm. The whole model may sit under "bert." (task heads save it so).
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"
#include "model/unexpected_tensors.h"

namespace headlight {
namespace families {

void readBertConfig(const ConfigReader& config, ModelSpec& spec, bool roberta) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("max_position_embeddings", 1, kMaxPositions);
    spec.typeVocabSize = config.requiredInt("type_vocab_size", 1, kMaxTypeVocab);
    spec.normEps = config.positiveFloatOr("layer_norm_eps", 1e-12);
    spec.activation = readActivation(config, "hidden_act", "gelu");
    spec.causal = config.boolOr("is_decoder", false);
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = true;
    readPadToken(config, spec, roberta ? 1 : 0);
    const std::string positions = config.stringOr("position_embedding_type", "absolute");
    if (positions != "absolute")
        config.fail("position_embedding_type '" + positions + "' is not supported (only absolute)");
}
} // namespace families

namespace {
constexpr families::EncoderLayerNames kBertLayer{
    "encoder.layer.",       "attention.self.query",   "attention.self.key",
    "attention.self.value", "attention.output.dense", "attention.output.LayerNorm",
    "intermediate.dense",   "output.dense",           "output.LayerNorm"};

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readBertConfig(config, spec, false);
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                        std::set<std::string>& read) {
    return families::readEncoderWeights(checkpoint, spec, kBertLayer, read);
}

bool ignoredInBase(const std::string& name) {
    return name.starts_with("pooler.") || name == "embeddings.position_ids" ||
           name == "embeddings.token_type_ids";
}
} // namespace

const ModelFamily kBertFamily{Architecture::Bert,
                              "bert",
                              "Bert",
                              "BERT",
                              "hidden_size",
                              "num_attention_heads",
                              readConfig,
                              readWeights,
                              families::taskHeads({"cls."}),
                              ignoredInBase,
                              nullptr,
                              families::readBertMaskedLmHead,
                              families::encoderEmbeddingTables};
} // namespace headlight
