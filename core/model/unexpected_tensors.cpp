#include "model/unexpected_tensors.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace headlight {
namespace {

bool startsWith(const std::string& text, const std::string& start) {
    return text.compare(0, start.size(), start) == 0;
}

bool startsWithAny(const std::string& text, const std::vector<std::string>& starts) {
    return std::any_of(starts.begin(), starts.end(),
                       [&](const std::string& start) { return startsWith(text, start); });
}

// `name` is `before` + a layer number + one of `afters` (e.g. "h.3.attn.bias").
bool isLayerBuffer(const std::string& name, const std::string& before,
                   const std::vector<std::string>& afters) {
    if (!startsWith(name, before)) return false;
    std::size_t end = before.size();
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
        ++end;
    if (end == before.size()) return false;
    const std::string rest = name.substr(end);
    return std::find(afters.begin(), afters.end(), rest) != afters.end();
}

// The heads HF's task classes put beside the base model, for the architectures that have them.
std::vector<std::string> taskHeads(Architecture architecture) {
    std::vector<std::string> heads{"lm_head.", "score.", "classifier.", "qa_outputs."};
    if (architecture == Architecture::Bert) heads.push_back("cls.");
    if (architecture == Architecture::DistilBert)
        heads.insert(heads.end(), {"vocab_transform.", "vocab_layer_norm.", "vocab_projector.",
                                   "pre_classifier."});
    return heads;
}

// The base model's own tensors HF drops: the pooler and buffers, named under `prefix`.
bool ignoredInBase(Architecture architecture, const std::string& name) {
    switch (architecture) {
    case Architecture::Bert:
    case Architecture::Roberta:
        return startsWith(name, "pooler.") || name == "embeddings.position_ids" ||
               name == "embeddings.token_type_ids";
    case Architecture::DistilBert:
        return name == "embeddings.position_ids";
    case Architecture::Gpt2:
        return isLayerBuffer(name, "h.", {".attn.bias", ".attn.masked_bias"});
    case Architecture::Llama:
    case Architecture::Qwen2:
    case Architecture::Mistral:
        return name == "rotary_emb.inv_freq" ||
               isLayerBuffer(name, "layers.", {".self_attn.rotary_emb.inv_freq"});
    case Architecture::Headlight:
        return false;
    }
    return false;
}
} // namespace

bool ignoredOnLoad(Architecture architecture, const std::string& prefix, const std::string& name) {
    if (architecture == Architecture::Headlight) return false;
    if (startsWithAny(name, taskHeads(architecture))) return true;
    return startsWith(name, prefix) && ignoredInBase(architecture, name.substr(prefix.size()));
}

void rejectUnexpectedTensors(const io::Checkpoint& checkpoint, Architecture architecture,
                             const std::string& prefix, const std::set<std::string>& read) {
    std::vector<std::string> unexpected;
    for (const std::string& name : checkpoint.names())
        if (!read.count(name) && !ignoredOnLoad(architecture, prefix, name))
            unexpected.push_back(name);
    if (unexpected.empty()) return;
    std::string more;
    if (unexpected.size() > 1) more = " and " + std::to_string(unexpected.size() - 1) + " more";
    throw io::CheckpointError(checkpoint.folder() + ": unexpected tensor '" + unexpected.front() +
                              "'" + more + ", which a " + architectureName(architecture) +
                              " model does not have (is this the architecture config.json names?)");
}
} // namespace headlight
