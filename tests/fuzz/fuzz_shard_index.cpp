// libFuzzer target: the strict JSON reader (io::JsonReader) on arbitrary bytes, walking every
// value, and the shard index model.safetensors.index.json as io::Checkpoint reads it, in a
// folder holding two real shards (the gpt2_plain golden model's) that the index may name.
#include "fuzz_support.h"
#include "io/checkpoint.h"
#include "io/json_reader.h"

using namespace headlight;

namespace {
constexpr const char* kShards[] = {"model-00001-of-00002.safetensors",
                                   "model-00002-of-00002.safetensors"};

const fuzz::ScratchFolder& folderWithShards() {
    static const fuzz::ScratchFolder folder = [] {
        fuzz::ScratchFolder made;
        for (const char* shard : kShards) {
            QFile source(QStringLiteral(HEADLIGHT_TEST_DATA "/models/gpt2_plain/") + shard);
            if (!source.open(QIODevice::ReadOnly)) {
                std::fprintf(stderr, "cannot read the golden shard %s\n", shard);
                std::abort();
            }
            const QByteArray bytes = source.readAll();
            made.write(shard, {bytes.constData(), std::size_t(bytes.size())});
        }
        return made;
    }();
    return folder;
}

// Reads every value with the reader's typed calls, as a caller that keeps everything would.
void walk(io::JsonReader& reader) {
    switch (reader.peekKind()) {
    case io::JsonReader::Kind::Object:
        reader.readObject([&](const std::string& key) {
            HEADLIGHT_FUZZ_CHECK(!io::firstInvalidUtf8(key)); // decoded keys stay valid UTF-8
            walk(reader);
        });
        return;
    case io::JsonReader::Kind::Array:
        reader.readArray([&](std::size_t) { walk(reader); });
        return;
    case io::JsonReader::Kind::String:
        HEADLIGHT_FUZZ_CHECK(!io::firstInvalidUtf8(reader.readString()));
        return;
    case io::JsonReader::Kind::Number: {
        const std::string_view literal = reader.readNumber();
        HEADLIGHT_FUZZ_CHECK(!literal.empty());
        if (const auto value = io::exactUnsignedInteger(literal, uint64_t(1) << 53))
            HEADLIGHT_FUZZ_CHECK(*value <= (uint64_t(1) << 53));
        return;
    }
    case io::JsonReader::Kind::Bool:
        reader.readBool();
        return;
    case io::JsonReader::Kind::Null:
        reader.readNull();
        return;
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        io::JsonReader reader(text);
        walk(reader);
        reader.expectEnd();
    } catch (const io::JsonSyntaxError& error) {
        HEADLIGHT_FUZZ_CHECK(error.offset() <= size);
    }
    try {
        io::JsonReader skipper(text);
        skipper.skipValue();
        skipper.expectEnd();
    } catch (const io::JsonSyntaxError&) {
    }

    const fuzz::ScratchFolder& folder = folderWithShards();
    folder.write("model.safetensors.index.json", text);
    try {
        const io::Checkpoint checkpoint(folder.path());
        for (const std::string& name : checkpoint.names()) {
            HEADLIGHT_FUZZ_CHECK(checkpoint.contains(name));
            checkpoint.info(name);
        }
    } catch (const io::CheckpointError&) {
    }
    return 0;
}
