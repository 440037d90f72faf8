#include "io/checkpoint.h"

#include "io/json_reader.h"
#include "io/legacy_names.h"
#include "io/safetensors.h"
#include "io/torch_checkpoint.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <set>

namespace headlight::io {
namespace {
constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kSafetensorsSuffix = ".safetensors";
constexpr const char* kTorchFile = "pytorch_model.bin";
constexpr const char* kTorchIndexFile = "pytorch_model.bin.index.json";
constexpr const char* kTorchSuffix = ".bin";
// An index lists tensor names and file names; even the largest models' are a few hundred KB.
constexpr qint64 kMaxIndexBytes = 100'000'000;
// Suffixes of PyTorch pickle formats, refused without ever being opened.
constexpr const char* kPickleSuffixes[] = {".bin", ".pt", ".pth", ".ckpt", ".pkl"};
constexpr int kNamesShown = 4;

[[noreturn]] void fail(const std::string& where, const std::string& problem) {
    throw CheckpointError(where + ": " + problem);
}

// Names come from the index, which may be 100 MB: a message shows a name's first 200 bytes (cut
// at a UTF-8 character boundary), so that a hostile name cannot flood a terminal or a dialog.
std::string quoted(const std::string& text) {
    constexpr std::size_t kShown = 200;
    if (text.size() <= kShown) return "'" + text + "'";
    std::size_t cut = kShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
        --cut;
    return "'" + text.substr(0, cut) + "…'";
}

std::string joinPath(const std::string& folder, const std::string& name) {
    return QDir(QString::fromStdString(folder))
        .filePath(QString::fromStdString(name))
        .toStdString();
}

bool isRegularFile(const std::string& path) {
    return QFileInfo(QString::fromStdString(path)).isFile();
}

bool exists(const std::string& path) {
    return QFileInfo::exists(QString::fromStdString(path));
}

bool endsWith(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A shard must be a plain file name with the index's suffix: no directory part (so no "../", no
// absolute path, no drive letter), and no other kind of file.
bool isPlainShardName(const std::string& name, const std::string& suffix) {
    return endsWith(name, suffix) && name != suffix &&
           name.find_first_of(std::string("/\\:\0", 4)) == std::string::npos;
}

std::string listNames(const std::vector<std::string>& names) {
    std::string list;
    for (int i = 0; i < static_cast<int>(names.size()) && i < kNamesShown; ++i)
        list += (i ? ", " : "") + names[static_cast<std::size_t>(i)];
    if (static_cast<int>(names.size()) > kNamesShown)
        list += " and " + std::to_string(names.size() - kNamesShown) + " more";
    return list;
}

std::vector<std::string> filesWithSuffix(const QDir& dir,
                                         std::initializer_list<const char*> suffixes) {
    std::vector<std::string> found;
    for (const QString& entry : dir.entryList(QDir::Files, QDir::Name)) {
        const std::string name = entry.toStdString();
        for (const char* suffix : suffixes)
            if (endsWith(name, suffix)) {
                found.push_back(name);
                break;
            }
    }
    return found;
}

// The weight_map of an index: tensor name → shard file name, each name checked.
std::map<std::string, std::string> readWeightMap(const std::string& indexPath,
                                                 const std::string& suffix) {
    QFile file(QString::fromStdString(indexPath));
    if (!file.open(QIODevice::ReadOnly))
        fail(indexPath, "cannot open (" + file.errorString().toStdString() + ")");
    if (file.size() > kMaxIndexBytes) fail(indexPath, "larger than 100 MB, not a shard index");
    const QByteArray bytes = file.readAll();
    std::map<std::string, std::string> weightMap;
    bool sawWeightMap = false;
    try {
        JsonReader reader({bytes.constData(), static_cast<std::size_t>(bytes.size())});
        if (reader.peekKind() != JsonReader::Kind::Object) fail(indexPath, "not a JSON object");
        reader.readObject([&](const std::string& key) {
            if (key != "weight_map") return reader.skipValue();
            if (sawWeightMap) fail(indexPath, "weight_map appears twice");
            sawWeightMap = true;
            if (reader.peekKind() != JsonReader::Kind::Object)
                fail(indexPath, "weight_map is not an object");
            reader.readObject([&](const std::string& tensor) {
                if (reader.peekKind() != JsonReader::Kind::String)
                    fail(indexPath,
                         "weight_map entry for " + quoted(tensor) + " is not a file name");
                const std::string shard = reader.readString();
                if (!isPlainShardName(shard, suffix))
                    fail(indexPath, "weight_map entry for " + quoted(tensor) + " names " +
                                        quoted(shard) + ", not a " + suffix +
                                        " file in the folder");
                if (!weightMap.emplace(tensor, shard).second)
                    fail(indexPath, "tensor " + quoted(tensor) + " is listed twice in weight_map");
            });
        });
        reader.expectEnd();
    } catch (const JsonSyntaxError& error) {
        fail(indexPath, std::string("not valid JSON (byte ") + std::to_string(error.offset()) +
                            ": " + error.what() + ")");
    }
    if (!sawWeightMap) fail(indexPath, "has no weight_map");
    if (weightMap.empty()) fail(indexPath, "weight_map is empty");
    return weightMap;
}

[[noreturn]] void refuseFolderWithoutSafetensors(const std::string& folder, const QDir& dir) {
    const auto safetensors = filesWithSuffix(dir, {kSafetensorsSuffix});
    if (!safetensors.empty())
        fail(folder, std::string("no ") + kSingleFile + " or " + kIndexFile + " (found " +
                         listNames(safetensors) + ", which Hugging Face would not load either)");
    const auto pickles =
        filesWithSuffix(dir, {kPickleSuffixes[0], kPickleSuffixes[1], kPickleSuffixes[2],
                              kPickleSuffixes[3], kPickleSuffixes[4]});
    if (!pickles.empty())
        fail(folder, "only PyTorch pickle weights (" + listNames(pickles) +
                         ") found; Headlight never executes pickles — convert them to "
                         "safetensors (e.g. with the safetensors convert script)");
    fail(folder,
         std::string("no weights found (expected ") + kSingleFile + " or " + kIndexFile + ")");
}
} // namespace

Checkpoint::Checkpoint(const std::string& folder)
    : folder_(folder) {
    const QFileInfo folderInfo(QString::fromStdString(folder));
    if (!folderInfo.exists()) fail(folder, "folder does not exist");
    if (!folderInfo.isDir()) fail(folder, "not a folder");
    const std::string single = joinPath(folder, kSingleFile);
    const std::string index = joinPath(folder, kIndexFile);
    const std::string torchFile = joinPath(folder, kTorchFile);
    const std::string torchIndex = joinPath(folder, kTorchIndexFile);
    // The order Hugging Face resolves weights in: safetensors before torch.save files, one file
    // before an index. Why exists() and not isFile(): a weights name that is a FIFO, a device or
    // a folder must be refused as such ("not a regular file"), not reported as missing weights;
    // the file readers refuse it before opening, and an index is checked here, since opening a
    // FIFO would block.
    const auto openIndex = [&](const std::string& path, const char* suffix) {
        if (!isRegularFile(path)) fail(path, "not a regular file");
        openShards(path, suffix);
    };
    if (exists(single))
        addFile(single);
    else if (exists(index))
        openIndex(index, kSafetensorsSuffix);
    else if (exists(torchFile))
        addFile(torchFile);
    else if (exists(torchIndex))
        openIndex(torchIndex, kTorchSuffix);
    else
        refuseFolderWithoutSafetensors(folder, QDir(folderInfo.absoluteFilePath()));
}

void Checkpoint::addFile(const std::string& path) {
    if (endsWith(path, kTorchSuffix))
        files_.push_back(std::make_shared<TorchCheckpointFile>(path));
    else
        files_.push_back(std::make_shared<SafetensorsFile>(path));
    const std::size_t fileNumber = files_.size() - 1;
    for (const auto& [name, info] : files_.back()->tensors()) {
        const auto [at, added] =
            fileIndex_.emplace(modernTensorName(name), Stored{fileNumber, name});
        if (added) continue;
        const Stored& first = at->second;
        if (first.name != name)
            fail(folder_, "tensors " + quoted(first.name) + " and " + quoted(name) +
                              " both load as " + quoted(at->first));
        fail(folder_, "tensor " + quoted(name) + " is in both " + files_[first.file]->path() +
                          " and " + path);
    }
}

void Checkpoint::openShards(const std::string& indexPath, const std::string& suffix) {
    const auto weightMap = readWeightMap(indexPath, suffix);
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : weightMap)
        shards.insert(shard);
    std::map<std::string, std::size_t> shardNumber;
    for (const std::string& shard : shards) {
        const std::string path = joinPath(folder_, shard);
        if (!exists(path)) fail(indexPath, "shard " + quoted(shard) + " is missing");
        addFile(path);
        shardNumber[shard] = files_.size() - 1;
    }
    for (const auto& [tensor, shard] : weightMap) {
        const auto found = fileIndex_.find(modernTensorName(tensor));
        if (found == fileIndex_.end() || found->second.file != shardNumber.at(shard) ||
            found->second.name != tensor)
            fail(indexPath, "tensor " + quoted(tensor) + " is listed in " + quoted(shard) +
                                " but that shard does not contain it");
    }
}

std::vector<std::string> Checkpoint::names() const {
    std::vector<std::string> names;
    names.reserve(fileIndex_.size());
    for (const auto& [name, stored] : fileIndex_)
        names.push_back(name); // std::map: already sorted
    return names;
}

bool Checkpoint::contains(const std::string& name) const {
    return fileIndex_.count(name) != 0;
}

const Checkpoint::Stored& Checkpoint::storedAs(const std::string& name) const {
    const auto found = fileIndex_.find(name);
    if (found == fileIndex_.end()) fail(folder_, "missing tensor " + quoted(name));
    return found->second;
}

const TensorInfo& Checkpoint::info(const std::string& name) const {
    const Stored& stored = storedAs(name);
    return files_[stored.file]->info(stored.name);
}

Tensor Checkpoint::loadF32(const std::string& name) const {
    const Stored& stored = storedAs(name);
    return files_[stored.file]->loadF32(stored.name);
}

std::vector<std::byte> Checkpoint::storedBytes(const std::string& name) const {
    const Stored& stored = storedAs(name);
    return files_[stored.file]->storedBytes(stored.name);
}

StoredMatrix Checkpoint::mappedMatrix(const std::string& name) const {
    const Stored& stored = storedAs(name);
    const auto* file = dynamic_cast<const SafetensorsFile*>(files_[stored.file].get());
    const TensorInfo& info = files_[stored.file]->info(stored.name);
    if (!file || !isMappableMatrix(info.dtype, info.shape.size())) return {};
    const std::span<const std::byte> bytes = file->bytes(stored.name);
    if (bytes.empty()) return {};
    return {info.dtype, bytes.data(), info.shape[0], info.shape[1], files_[stored.file]};
}
} // namespace headlight::io
