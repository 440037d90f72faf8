#include "model/model_family.h"

#include <stdexcept>

namespace headlight {
namespace {
// The order error messages and `headlight info` list them in.
const ModelFamily* const kFamilies[] = {
    &kBertFamily,  &kRobertaFamily, &kDistilBertFamily, &kGpt2Family, &kLlamaFamily,
    &kQwen2Family, &kMistralFamily, &kQwen3Family,      &kOptFamily,  &kGptNeoXFamily,
    &kGptJFamily,  &kPhi3Family,    &kHeadlightFamily,
};
} // namespace

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
