// libFuzzer target: tokenizer.json (Hugging Face tokenizers' format: model, normalizer,
// pre-tokenizer, post-processor, added tokens), with an optional tokenizer_config.json after the
// first NUL; the tokenizer built from them then encodes short texts.
#include "fuzz_support.h"

using namespace headlight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    static const fuzz::ScratchFolder folder;
    const auto parts = fuzz::splitAtNul(data, size, 2);
    folder.write("tokenizer.json", parts[0]);
    folder.writeOptional("tokenizer_config.json", parts, 1);
    fuzz::loadAndExercise(folder);
    return 0;
}
