// The Headlight zoo (docs/zoo-format.md): sizes in BERT's key names, `is_decoder` for language
// models and the `headlight` section, a variant spec that also carries the architecture keys.
// Its weights are read by core/model/zoo_layout.cpp; the zoo's own format has no extra tensors,
// so nothing is ignored on load.
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"
#include "model/weight_reader.h"
#include "variants/applicability.h"

#include <QJsonDocument>

namespace headlight {
namespace {

Activation zooActivation(const std::string& activation) {
    return activation == "relu" || activation == "reglu"     ? Activation::Relu
           : activation == "swish" || activation == "swiglu" ? Activation::Silu
           : activation == "gelu_tanh"                       ? Activation::GeluTanh
                                                             : Activation::Gelu;
}

void readConfig(const ConfigReader& config, ModelSpec& spec) {
    spec.vocabSize = config.requiredInt("vocab_size", 1, kMaxVocab);
    spec.hidden = config.requiredInt("hidden_size", 1, kMaxHidden);
    spec.layers = config.requiredInt("num_hidden_layers", 1, kMaxLayers);
    spec.heads = config.requiredInt("num_attention_heads", 1, kMaxHeads);
    spec.intermediate = config.requiredInt("intermediate_size", 1, kMaxIntermediate);
    spec.maxPositions = config.requiredInt("max_position_embeddings", 1, kMaxPositions);
    spec.normEps = config.positiveFloatOr("layer_norm_eps", 1e-5);
    spec.causal = config.boolOr("is_decoder", false);
    spec.tieEmbeddings = true;
    spec.attentionBias = true;
    const QJsonValue section = config.value("headlight");
    if (!section.isUndefined() && !section.isObject()) config.fail("'headlight' must be an object");
    try {
        spec.zoo =
            variants::parseVariantSpec(QJsonDocument(section.toObject()).toJson().toStdString());
    } catch (const variants::VariantError& error) {
        config.fail(std::string("headlight section: ") + error.what());
    }
    if (spec.zoo.knn)
        config.fail("headlight section: a kNN-LM datastore belongs to a variant spec, not a "
                    "checkpoint");
    if (!spec.zoo.block) spec.zoo.block = variants::BlockSpec{};
    if (spec.zoo.position == variants::PositionKind::Checkpoint)
        spec.zoo.position = variants::PositionKind::Learned;
    try {
        variants::checkFunnel(spec.zoo, spec);
    } catch (const variants::VariantError& error) {
        config.fail(std::string("headlight section: ") + error.what());
    }
    spec.activation = zooActivation(spec.zoo.block->activation);
    spec.preNorm = spec.zoo.block->placement == variants::BlockSpec::Placement::Pre;
}

bool ignoredInBase(const std::string&) {
    return false;
}
} // namespace

const ModelFamily kHeadlightFamily{Architecture::Headlight,
                                   "headlight",
                                   "Headlight",
                                   "Headlight zoo",
                                   "hidden_size",
                                   "num_attention_heads",
                                   readConfig,
                                   readZooWeights,
                                   {},
                                   ignoredInBase,
                                   nullptr,
                                   families::readTiedHead};
} // namespace headlight
