// libFuzzer target: variant spec JSON → VariantSpec (parseVariantSpec), then what the engine builds
// from a spec before any forward pass: the sparse mask and the adaptive-span ramps for a few
// short lengths, and the applicability check against an encoder and a decoder.
#include "fuzz_support.h"
#include "model/model_spec.h"
#include "variants/adaptive_span.h"
#include "variants/applicability.h"
#include "variants/sparse_mask.h"
#include "variants/variant_spec.h"

using namespace headlight;

namespace {
ModelSpec smallModel(Architecture architecture, bool causal) {
    ModelSpec spec;
    spec.architecture = architecture;
    spec.vocabSize = 64;
    spec.hidden = 32;
    spec.layers = 2;
    spec.heads = spec.kvHeads = 4;
    spec.headDim = 8;
    spec.intermediate = 64;
    spec.maxPositions = 64;
    spec.causal = causal;
    spec.tieEmbeddings = causal;
    return spec;
}

void checkMask(const Tensor& mask, int64_t tokens, int heads) {
    HEADLIGHT_FUZZ_CHECK(mask.rank() == 3 && mask.shape()[1] == tokens && mask.shape()[2] == tokens);
    HEADLIGHT_FUZZ_CHECK(mask.shape()[0] == 1 || mask.shape()[0] == heads);
    for (float v : mask.values()) HEADLIGHT_FUZZ_CHECK(v == 0.0f || v == 1.0f);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    variants::VariantSpec spec;
    try {
        spec = variants::parseVariantSpec(std::string(reinterpret_cast<const char*>(data), size));
    } catch (const variants::VariantError&) {
        return 0;
    }
    constexpr int heads = 4;
    for (int64_t tokens : {int64_t(1), int64_t(7), int64_t(33)}) {
        if (spec.mask) checkMask(variants::buildSparseMask(*spec.mask, tokens, heads), tokens, heads);
        if (spec.span.enabled) {
            const Tensor ramps = variants::spanMask(spec.span, heads, tokens);
            for (float v : ramps.values()) HEADLIGHT_FUZZ_CHECK(v >= 0.0f && v <= 1.0f);
        }
    }
    for (const ModelSpec& model : {smallModel(Architecture::Bert, false), smallModel(Architecture::Gpt2, true),
                                   smallModel(Architecture::Headlight, true)}) {
        try {
            variants::checkApplies(spec, model);
        } catch (const variants::VariantError&) {
        }
    }
    return 0;
}
