// libFuzzer target: config.json → ModelSpec (parseModelConfig), then what the engine derives from
// a spec before any weight is read: the memory estimates, and readWeights against a small real
// checkpoint of the same architecture (the golden models), which must refuse every tensor whose
// shape the config does not imply.
#include "fuzz_support.h"
#include "io/checkpoint.h"
#include "model/checkpoint_layout.h"
#include "model/memory_budget.h"
#include "model/model_spec.h"

#include <cmath>
#include <map>

using namespace headlight;

namespace {
// One golden checkpoint per architecture, opened once (they stay mapped).
const io::Checkpoint* goldenCheckpoint(Architecture architecture) {
    static const std::map<Architecture, std::unique_ptr<io::Checkpoint>> checkpoints = [] {
        std::map<Architecture, std::unique_ptr<io::Checkpoint>> opened;
        const std::pair<Architecture, const char*> folders[] = {
            {Architecture::Bert, "bert"},
            {Architecture::Roberta, "roberta"},
            {Architecture::DistilBert, "distilbert"},
            {Architecture::Gpt2, "gpt2"},
            {Architecture::Llama, "llama"},
            {Architecture::Qwen2, "qwen2"},
            {Architecture::Mistral, "mistral"},
            {Architecture::Qwen3, "qwen3"},
            {Architecture::Opt, "opt"},
            {Architecture::Gemma2, "gemma2"},
            {Architecture::Gemma3, "gemma3"},
            {Architecture::Headlight, "../zoo/post_layer_learned_gelu"},
        };
        for (const auto& [architecture, folder] : folders)
            opened[architecture] = std::make_unique<io::Checkpoint>(
                std::string(HEADLIGHT_TEST_DATA "/models/") + folder);
        return opened;
    }();
    return checkpoints.at(architecture).get();
}

void checkSpec(const ModelSpec& spec) {
    HEADLIGHT_FUZZ_CHECK(spec.vocabSize >= 1 && spec.hidden >= 1 && spec.layers >= 1);
    HEADLIGHT_FUZZ_CHECK(spec.heads >= 1 && spec.kvHeads >= 1 && spec.headDim >= 1);
    HEADLIGHT_FUZZ_CHECK(spec.heads % spec.kvHeads == 0);
    HEADLIGHT_FUZZ_CHECK(spec.intermediate >= 1 && spec.maxPositions >= 1);
    // The eps is stored as a float: a config's double must not become 0 or inf on the way.
    HEADLIGHT_FUZZ_CHECK(std::isfinite(spec.normEps) && spec.normEps > 0);
    HEADLIGHT_FUZZ_CHECK(std::isfinite(spec.ropeTheta) && spec.ropeTheta > 0);
    HEADLIGHT_FUZZ_CHECK(spec.positionOffset >= 0 && spec.positionOffset < spec.maxPositions);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    ModelSpec spec;
    try {
        spec = parseModelConfig(std::string(reinterpret_cast<const char*>(data), size));
    } catch (const io::CheckpointError&) {
        return 0;
    }
    checkSpec(spec);
    CaptureRequest all;
    all.scores = true;
    all.hiddenStates = true;
    CaptureRequest some;
    some.layers = {0, spec.layers - 1};
    some.heads = {0};
    for (int64_t tokens : {int64_t(1), int64_t(512), int64_t(spec.maxPositions)})
        for (const CaptureRequest& capture : {all, some, CaptureRequest{}})
            for (bool host : {true, false}) {
                const ForwardEstimate estimate = estimateForward(spec, tokens, capture, host);
                HEADLIGHT_FUZZ_CHECK(estimate.total() > 0);
                HEADLIGHT_FUZZ_CHECK(!formatBytes(estimate.total()).empty());
            }
    try {
        readWeights(*goldenCheckpoint(spec.architecture), spec);
    } catch (const io::CheckpointError&) {
    }
    return 0;
}
