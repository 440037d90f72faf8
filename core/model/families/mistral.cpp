// Mistral (modeling_mistral.py): Llama's layout with a sliding attention window. An absent
// sliding_window means HF's default of 4096; an explicit null means none.
#include "model/families/layout_helpers.h"
#include "model/families/lm_heads.h"
#include "model/families/shared_readers.h"
#include "model/model_family.h"

namespace headlight {
namespace {
void readConfig(const ConfigReader& config, ModelSpec& spec) {
    families::readLlamaConfig(config, spec, 4096 * 32);
    if (!config.value("sliding_window").isNull())
        spec.slidingWindow = config.intOr("sliding_window", 4096, 1, kMaxPositions);
}

} // namespace

const ModelFamily kMistralFamily{Architecture::Mistral,
                                 "mistral",
                                 "Mistral",
                                 "Mistral",
                                 "hidden_size",
                                 "num_attention_heads",
                                 readConfig,
                                 families::readLlamaWeights,
                                 families::taskHeads(),
                                 families::isRotaryBuffer,
                                 nullptr,
                                 families::readCausalLmHead};
} // namespace headlight
