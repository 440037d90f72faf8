#pragma once
// A model family: everything Headlight knows about one Hugging Face architecture, declared in one
// file of core/model/families/ — the model_type and class names config.json uses for it, how its
// config reads, where its checkpoint keeps each tensor, which tensors HF drops on load and how
// its position ids count. model_family.cpp lists the families; nothing else branches on them.
// To add a family: write core/model/families/NAME.cpp defining a ModelFamily, add it to the
// table in model_family.cpp, and add its golden checkpoint (tools/golden/checkpoints.py).

#include "io/checkpoint.h"
#include "model/checkpoint_layout.h"
#include "model/model_spec.h"

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace headlight {

class ConfigReader;

struct ModelFamily {
    Architecture architecture;
    const char* modelType;   // config model_type, e.g. "qwen3"
    const char* classPrefix; // architectures[0] starts with it: "Qwen3" in "Qwen3ForCausalLM"
    const char* displayName; // what the status bar and `headlight info` say, e.g. "Qwen3"
    const char* hiddenKey;   // the config keys naming width and heads, for error messages
    const char* headsKey;
    // Fills the sizes and wiring of `spec` from config.json (throws through `config.fail`).
    void (*readConfig)(const ConfigReader& config, ModelSpec& spec);
    // Reads the weights into the uniform layout; adds every full name read to `read`.
    HostWeights (*readWeights)(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                               std::set<std::string>& read);
    // Top-level task heads beside the base model that HF drops (families::taskHeads), and
    // base-model tensors it drops, named without the checkpoint's prefix.
    std::vector<std::string> taskHeads;
    bool (*ignoredInBase)(const std::string& name);
    // Position ids of a sequence; null = 0, 1, ..., T-1.
    std::vector<int32_t> (*positionIds)(const ModelSpec& spec, std::span<const int32_t> ids,
                                        std::span<const uint8_t> mask);
    // Reads the LM head HF keeps on load (families/lm_heads.h); a head tensor it does not read
    // is still dropped through taskHeads. Null: Headlight reads no head of this family.
    HostLmHead (*readLmHead)(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                             std::set<std::string>& read) = nullptr;
    // The full names of the 2-D float tensors its layout widens to f32 on load although the file
    // could keep them mapped, so that the memory plans (model/memory_budget.h) count them as f32.
    // Null: the plans take every such tensor as mapped.
    std::vector<std::string> (*widenedMatrices)(const io::Checkpoint& checkpoint,
                                                const ModelSpec& spec) = nullptr;
};

// Every family, in the order error messages list them.
std::span<const ModelFamily* const> modelFamilies();
const ModelFamily& familyOf(Architecture architecture);
// "bert, roberta, ...": the model_type values Headlight runs.
std::string supportedModelTypes();
// Why a model_type Headlight knows of but does not run is refused; null for any other.
const char* refusalReason(const std::string& modelType);

// The families defined in core/model/families/*.cpp.
extern const ModelFamily kBertFamily, kRobertaFamily, kDistilBertFamily, kGpt2Family, kLlamaFamily,
    kQwen2Family, kMistralFamily, kQwen3Family, kOptFamily, kGptNeoXFamily, kGptJFamily,
    kPhi3Family, kHeadlightFamily;
extern const ModelFamily kGemma2Family, kGemma3Family; // families/gemma.cpp
} // namespace headlight
