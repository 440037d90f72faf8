#include "model/families/shared_readers.h"

#include "model/unexpected_tensors.h"

#include <QJsonArray>

namespace headlight::families {

std::vector<std::string> taskHeads(std::initializer_list<const char*> own) {
    std::vector<std::string> heads{"lm_head.", "score.", "classifier.", "qa_outputs."};
    heads.insert(heads.end(), own.begin(), own.end());
    return heads;
}

namespace {
// How many of layer_types' entries say "sliding_attention"; fails on anything but the two kinds.
int slidingLayerCount(const ConfigReader& config, const ModelSpec& spec) {
    const QJsonValue types = config.value("layer_types");
    if (!types.isArray() || types.toArray().size() != spec.layers)
        config.fail("layer_types must list one kind per layer (" + std::to_string(spec.layers) +
                    ")");
    int sliding = 0;
    for (const QJsonValue& type : types.toArray()) {
        const QString kind = type.toString();
        if (kind != "sliding_attention" && kind != "full_attention")
            config.fail("layer_types entry " + ConfigReader::describe(type) +
                        " is not supported (sliding_attention or full_attention)");
        sliding += kind == "sliding_attention";
    }
    return sliding;
}
} // namespace

void readQwenWindow(const ConfigReader& config, ModelSpec& spec) {
    if (!config.boolOr("use_sliding_window", false) || !config.has("sliding_window")) return;
    const int window = config.requiredInt("sliding_window", 1, kMaxPositions);
    const std::string mixed = " mixes windowed and full attention layers, which is not supported";
    if (config.has("layer_types")) {
        const int sliding = slidingLayerCount(config, spec);
        if (sliding > 0 && sliding < spec.layers)
            config.fail("use_sliding_window with layer_types marking " + std::to_string(sliding) +
                        " of " + std::to_string(spec.layers) + " layers sliding" + mixed);
        if (sliding == spec.layers) spec.slidingWindow = window;
        return;
    }
    const int firstWindowed = config.intOr("max_window_layers", 28, 0, kMaxLayers);
    if (firstWindowed >= spec.layers) return;
    if (firstWindowed > 0)
        config.fail("use_sliding_window with max_window_layers " + std::to_string(firstWindowed) +
                    " below num_hidden_layers " + std::to_string(spec.layers) + mixed);
    spec.slidingWindow = window;
}

bool isRotaryBuffer(const std::string& name) {
    return name == "rotary_emb.inv_freq" ||
           isLayerBuffer(name, "layers.", {".self_attn.rotary_emb.inv_freq"});
}

bool isAttentionMaskBuffer(const std::string& name) {
    return isLayerBuffer(name, "h.", {".attn.bias", ".attn.masked_bias"});
}
} // namespace headlight::families
