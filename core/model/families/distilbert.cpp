// DistilBERT (modeling_distilbert.py): BERT's structure under new names, no token types, eps
// fixed at 1e-12. Why sinusoidal_pos_embds is accepted: DistilBERT fills its position table with
// the sinusoids at init and saves it like any weight, so the checkpoint carries the table either
// way.
#include "model/families/layout_helpers.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {
constexpr families::EncoderLayerNames kDistilBertLayer{
    "transformer.layer.", "attention.q_lin",   "attention.k_lin",
    "attention.v_lin",    "attention.out_lin", "sa_layer_norm",
    "ffn.lin1",           "ffn.lin2",          "output_layer_norm"};

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("dim", 1, kMaxHidden);
    spec.layers = config.requiredInt("n_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("n_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("hidden_dim", 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("max_position_embeddings", 1, kMaxPositions);
    spec.typeVocabSize = 0;
    spec.normEps = 1e-12f; // hard-coded in modeling_distilbert, not a config key
    spec.activation = readActivation(config, "activation", "gelu");
    spec.tieEmbeddings = config.boolOr("tie_word_embeddings", true);
    spec.attentionBias = true;
    readPadToken(config, spec, 0);
}

HostWeights readWeights(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                        std::set<std::string>& read) {
    return families::readEncoderWeights(checkpoint, spec, kDistilBertLayer, read);
}

bool ignoredInBase(const std::string& name) {
    return name == "embeddings.position_ids";
}
} // namespace

const ModelFamily kDistilBertFamily{Architecture::DistilBert,
                                    "distilbert",
                                    "DistilBert",
                                    "DistilBERT",
                                    "dim",
                                    "n_heads",
                                    readConfig,
                                    readWeights,
                                    families::taskHeads({"vocab_transform.", "vocab_layer_norm.",
                                                         "vocab_projector.", "pre_classifier."}),
                                    ignoredInBase,
                                    nullptr,
                                    nullptr,
                                    families::encoderEmbeddingTables};
} // namespace headlight
