#pragma once
// The SHA-256 of the files of a checkpoint folder that Headlight reads, by role, for the
// provenance of exports (app/figures/provenance.h). ModelSession hashes a model's files on a
// worker thread once the model has loaded (an 8B's 16 GB take a minute), so the window's first
// export does not stall on them and the model is usable meanwhile; each file is hashed once per
// version (path, size, modification time) in a process.

#include <QString>
#include <atomic>
#include <map>
#include <stdexcept>

namespace headlight::app {

using FileHashes = std::map<QString, QString>; // file name → SHA-256 (lower-case hex)

// The files of a checkpoint folder that Headlight reads, by role, hashed.
struct ModelFiles {
    FileHashes weights;   // model*.safetensors, pytorch_model*.bin and their shard indexes
    FileHashes tokenizer; // tokenizer*, vocab*, merges.txt, special_tokens_map.json, …
    FileHashes config;    // the folder's other .json files (config.json, zoo.json)
    bool operator==(const ModelFiles&) const = default;
};

class FileHashError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// SHA-256 of a file, computed once per file version (path, size, modification time) in this
// process, so a model's weights are hashed once however many figures are exported from it.
// Throws FileHashError when the file cannot be read, or when `stop` is set while it is read.
QString fileSha256(const QString& path, const std::atomic<bool>* stop = nullptr);
ModelFiles hashModelFiles(const QString& folder, const std::atomic<bool>* stop = nullptr);
} // namespace headlight::app
