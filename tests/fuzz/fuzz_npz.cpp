// libFuzzer target: NumPy files. An input that starts with .npy's magic is one array, parsed by
// parseNpy and widened by npyToF32; anything else is a whole .npz archive read by NpzFile (the
// torch zip reader underneath), every array widened, then assembled as a Gemma Scope 1 SAE. Why
// both forms: a mutation of an .npy inside a zip breaks its CRC-32, so header fuzzing would stop
// at the container checks. Each must refuse in CheckpointError or SaeFolderError or give arrays
// whose element count is the product of their shape; an SAE that is small enough then encodes
// two rows, whose features must be ≥ 0 or NaN.
#include "analysis/sparse_autoencoder.h"
#include "fuzz_support.h"
#include "io/gemma_scope_folder.h"
#include "io/npy_array.h"
#include "io/npz_file.h"

#include <cmath>
#include <cstring>
#include <span>

using namespace headlight;

namespace {

std::size_t elementCount(const std::vector<int64_t>& shape) {
    std::size_t count = 1;
    for (int64_t dim : shape)
        count *= std::size_t(dim);
    return count;
}

void fuzzNpy(std::span<const std::byte> bytes) {
    const io::NpyArray array = io::parseNpy("a.npy", bytes);
    HEADLIGHT_FUZZ_CHECK(array.elements.size() ==
                         elementCount(array.shape) * io::dtypeSize(array.dtype));
    if (array.elements.size() > (std::size_t(1) << 20)) return;
    HEADLIGHT_FUZZ_CHECK(io::npyToF32(array).size() == elementCount(array.shape));
}

void fuzzGemmaScope(const io::NpzFile& file) {
    for (const auto& [name, info] : file.tensors()) {
        if (elementCount(info.shape) > (std::size_t(1) << 20)) return;
        HEADLIGHT_FUZZ_CHECK(file.loadF32(name).size() == elementCount(info.shape));
    }
    io::SaeConfig config;
    config.layout = "gemma-scope";
    config.hookName = "blocks.0.hook_resid_post";
    const analysis::SparseAutoencoder sae = io::assembleGemmaScope(config, file).sae;
    if (int64_t(sae.dIn) * sae.dSae > 1 << 16) return;
    Tensor x({2, int64_t(sae.dIn)});
    for (std::size_t i = 0; i < x.size(); ++i)
        x.data()[i] = float(int(i % 5) - 2) * 0.75f;
    const analysis::SaeEncoding encoding = analysis::encodeAndDecode(sae, x);
    for (float f : encoding.features.values())
        HEADLIGHT_FUZZ_CHECK(std::isnan(f) || f >= 0.0f);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const auto bytes = std::as_bytes(std::span(data, size));
    try {
        if (size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0) {
            fuzzNpy(bytes);
            return 0;
        }
        fuzzGemmaScope(*io::NpzFile::fromBytes("params.npz", bytes));
    } catch (const io::CheckpointError&) {
    } catch (const io::SaeFolderError&) {
    }
    return 0;
}
