#include "model/model_family.h"

#include <stdexcept>

namespace headlight {
namespace {
// The order error messages and `headlight info` list them in.
const ModelFamily* const kFamilies[] = {
    &kBertFamily,  &kRobertaFamily, &kDistilBertFamily, &kGpt2Family,
    &kLlamaFamily, &kQwen2Family,   &kMistralFamily,    &kQwen3Family,
    &kOptFamily,   &kGemma2Family,  &kGemma3Family,     &kHeadlightFamily,
};

// model_type values of architectures Headlight knows of but does not run, and why.
struct Refusal {
    const char* modelType;
    const char* reason;
};
constexpr Refusal kRefusals[] = {
    {"gemma3", "model_type 'gemma3' is the multimodal Gemma 3 (Gemma3ForConditionalGeneration, a "
               "vision tower beside the text model); Headlight runs Gemma 3's text-only "
               "checkpoints, model_type 'gemma3_text' (Gemma3ForCausalLM)"},
};
} // namespace

const char* refusalReason(const std::string& modelType) {
    for (const Refusal& refusal : kRefusals)
        if (modelType == refusal.modelType) return refusal.reason;
    return nullptr;
}

std::span<const ModelFamily* const> modelFamilies() {
    return kFamilies;
}

const ModelFamily& familyOf(Architecture architecture) {
    for (const ModelFamily* family : kFamilies)
        if (family->architecture == architecture) return *family;
    throw std::logic_error("an Architecture value without a family in model_family.cpp");
}

std::string supportedModelTypes() {
    std::string list;
    for (const ModelFamily* family : kFamilies)
        list += (list.empty() ? "" : ", ") + std::string(family->modelType);
    return list;
}
} // namespace headlight
