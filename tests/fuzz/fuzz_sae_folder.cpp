// libFuzzer target: a SAELens SAE folder, cfg.json NUL sae_weights.safetensors (fuzz_support.h),
// through parseSaeConfig, the hardened safetensors reader and assembleSae (or, where the first
// part is not a SAELens cfg, as Llama Scope's hyperparams.json NUL final.safetensors through
// parseLlamaScopeHyperparams and assembleLlamaScope; where it names hf_hook_point_in, as Gemma
// Scope 2's config.json NUL params.safetensors through parseGemmaScope2Config and
// assembleGemmaScope), which must refuse in
// SaeFolderError or CheckpointError or give an SAE whose tensors have the shapes the config
// implies; a small one then encodes two rows, whose features must be ≥ 0 or NaN (every
// architecture ends in ReLU) and whose shapes follow d_in and d_sae.
#include "analysis/sparse_autoencoder.h"
#include "fuzz_support.h"
#include "io/gemma_scope_folder.h"
#include "io/llama_scope_folder.h"
#include "io/sae_folder.h"
#include "io/safetensors.h"

#include <cmath>
#include <span>

using namespace headlight;

namespace {
io::SaeFolder saelensOrLlamaScope(std::string_view text, const io::SafetensorsFile& weights) {
    try {
        const io::SaeConfig config = io::parseSaeConfig(text, "cfg.json");
        HEADLIGHT_FUZZ_CHECK(config.dIn >= 1 && config.dSae >= 1);
        return io::assembleSae(config, weights, std::nullopt);
    } catch (const io::SaeFolderError&) {
        const io::LlamaScopeConfig config =
            io::parseLlamaScopeHyperparams(text, "hyperparams.json");
        HEADLIGHT_FUZZ_CHECK(config.sae.dIn >= 1 && config.sae.dSae >= 1);
        return io::assembleLlamaScope(config, weights);
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::vector<std::string_view> parts = fuzz::splitAtNul(data, size, 2);
    if (parts.size() != 2) return 0;
    io::SaeFolder folder;
    try {
        const auto weights = io::SafetensorsFile::fromBytes(
            "sae_weights.safetensors", std::as_bytes(std::span(parts[1].data(), parts[1].size())));
        folder = parts[0].find("hf_hook_point_in") != std::string_view::npos
                     ? io::assembleGemmaScope(io::parseGemmaScope2Config(parts[0], "config.json"),
                                              *weights)
                     : saelensOrLlamaScope(parts[0], *weights);
    } catch (const io::SaeFolderError&) {
        return 0;
    } catch (const io::CheckpointError&) {
        return 0;
    }
    const analysis::SparseAutoencoder& sae = folder.sae;
    HEADLIGHT_FUZZ_CHECK(sae.wEnc.shape() == (std::vector<int64_t>{sae.dIn, sae.dSae}));
    HEADLIGHT_FUZZ_CHECK(sae.wDec.shape() == (std::vector<int64_t>{sae.dSae, sae.dIn}));
    if (int64_t(sae.dIn) * sae.dSae > 1 << 16) return 0;
    Tensor x({2, int64_t(sae.dIn)});
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] = float(int(i % 7) - 3) * 0.5f;
    const analysis::SaeEncoding encoding = analysis::encodeAndDecode(sae, x);
    HEADLIGHT_FUZZ_CHECK(encoding.features.shape() == (std::vector<int64_t>{2, sae.dSae}));
    HEADLIGHT_FUZZ_CHECK(encoding.output.shape() == (std::vector<int64_t>{2, sae.dIn}));
    for (float f : encoding.features.values())
        HEADLIGHT_FUZZ_CHECK(std::isnan(f) || f >= 0.0f);
    return 0;
}
