// libFuzzer target: a GGUF file (llama.cpp's control vectors are the seeds) through parseGguf,
// which must refuse in GgufError or give tensors whose f32 values match their dimensions, and
// then through controlVectorDirections, which must refuse in SteeringVectorError or give
// directions for blocks from 1, all of one length.
#include "fuzz_support.h"
#include "io/gguf.h"
#include "io/steering_vector_file.h"

#include <span>

using namespace headlight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    io::GgufFile file;
    try {
        file = io::parseGguf(std::as_bytes(std::span(data, size)), "fuzz.gguf");
    } catch (const io::GgufError&) {
        return 0;
    }
    HEADLIGHT_FUZZ_CHECK(file.version == 2 || file.version == 3);
    for (const io::GgufTensor& tensor : file.tensors) {
        HEADLIGHT_FUZZ_CHECK(!tensor.dims.empty() && tensor.dims.size() <= 4);
        std::size_t elements = 1;
        for (int64_t d : tensor.dims)
            elements *= std::size_t(d);
        HEADLIGHT_FUZZ_CHECK(tensor.values.size() == elements);
    }
    try {
        const std::vector<io::ControlDirection> directions =
            io::controlVectorDirections(file, "fuzz.gguf");
        for (const io::ControlDirection& d : directions) {
            HEADLIGHT_FUZZ_CHECK(d.block >= 1);
            HEADLIGHT_FUZZ_CHECK(d.direction.size() == directions.front().direction.size());
        }
    } catch (const io::SteeringVectorError&) {
    }
    return 0;
}
