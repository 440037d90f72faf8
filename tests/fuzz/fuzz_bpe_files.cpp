// libFuzzer target: a GPT-2 / RoBERTa folder's byte-level BPE files. The input is vocab.json, a
// NUL, merges.txt, and optionally a NUL and tokenizer_config.json (which picks the GPT-2 or the
// RoBERTa post-processing); the tokenizer built from them then encodes short texts.
#include "fuzz_support.h"

using namespace headlight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    static const fuzz::ScratchFolder folder;
    const auto parts = fuzz::splitAtNul(data, size, 3);
    folder.write("vocab.json", parts[0]);
    // Without merges.txt the folder has no tokenizer at all, which is not worth an input.
    folder.write("merges.txt", parts.size() > 1 ? parts[1] : std::string_view());
    folder.writeOptional("tokenizer_config.json", parts, 2);
    fuzz::loadAndExercise(folder);
    return 0;
}
