#include "io/hub_cache.h"

#include "io/safetensors.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

namespace headlight::io {
namespace {
namespace fs = std::filesystem;

constexpr const char* kRepoFolderPrefix = "models--";
constexpr const char* kIncompleteSuffix = ".incomplete";
constexpr std::size_t kNamesShown = 8;
constexpr std::uintmax_t kMaxRefBytes = 256;   // a commit hash and a newline
constexpr qint64 kMaxIndexBytes = 100'000'000; // as io/checkpoint.cpp allows
constexpr std::size_t kMaxRepoIdPart = 96;     // huggingface_hub's limit per part

[[noreturn]] void fail(const std::string& message) {
    throw CheckpointError(message);
}

std::string environment(const char* name) {
    const char* value = std::getenv(name);
    if (!value || !*value) return {};
    const std::string text(value);
    const char* home = std::getenv("HOME");
    // Why: huggingface_hub calls os.path.expanduser on these variables.
    if (home && (text == "~" || text.rfind("~/", 0) == 0)) return home + text.substr(1);
    return text;
}

bool startsWith(const std::string& text, const std::string& start) {
    return text.rfind(start, 0) == 0;
}

bool endsWith(const std::string& text, const std::string& end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// "models--ORG--NAME" → "ORG/NAME"; huggingface_hub forbids "--" inside ids, so this is exact.
std::string repoIdOf(const fs::path& repoFolder) {
    std::string id = repoFolder.filename().string().substr(std::string(kRepoFolderPrefix).size());
    for (std::size_t at = id.find("--"); at != std::string::npos; at = id.find("--", at + 1))
        id.replace(at, 2, "/");
    return id;
}

std::string repoFolderName(const std::string& repoId) {
    std::string name = kRepoFolderPrefix + repoId;
    for (std::size_t at = name.find('/'); at != std::string::npos; at = name.find('/', at))
        name.replace(at, 1, "--");
    return name;
}

bool isRepoIdPart(const std::string& part) {
    if (part.empty() || part.size() > kMaxRepoIdPart) return false;
    if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
        return false;
    if (part.find("--") != std::string::npos || part.find("..") != std::string::npos) return false;
    return std::all_of(part.begin(), part.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
}

// "ORG/NAME" or "NAME", spelled as huggingface_hub's validate_repo_id allows.
bool isRepoId(const std::string& text) {
    const std::size_t slash = text.find('/');
    if (slash == std::string::npos) return isRepoIdPart(text);
    return isRepoIdPart(text.substr(0, slash)) && isRepoIdPart(text.substr(slash + 1));
}

// A file or folder name with no path in it: what refs/main may name under snapshots/.
bool isPlainName(const std::string& name) {
    return !name.empty() && name != "." && name != ".." &&
           name.find_first_of(std::string("/\\\0", 3)) == std::string::npos;
}

bool isRepoFolder(const fs::path& folder) {
    std::error_code error;
    return startsWith(folder.filename().string(), kRepoFolderPrefix) &&
           fs::is_directory(folder / "snapshots", error);
}

bool isSnapshotFolder(const fs::path& folder) {
    return folder.parent_path().filename() == "snapshots" &&
           isRepoFolder(folder.parent_path().parent_path());
}

// `path` lies strictly inside `folder` (both already canonical).
bool isInside(const fs::path& path, const fs::path& folder) {
    const auto [folderEnd, pathAt] =
        std::mismatch(folder.begin(), folder.end(), path.begin(), path.end());
    return folderEnd == folder.end() && pathAt != path.end();
}

std::string readRef(const fs::path& ref) {
    std::error_code error;
    if (!fs::is_regular_file(ref, error) || fs::file_size(ref, error) > kMaxRefBytes) return {};
    std::ifstream in(ref);
    std::string hash;
    in >> hash;
    return hash;
}

// The shards a snapshot's index names (empty when it cannot be read: the checkpoint reader then
// reports the index itself).
std::set<std::string> indexedShards(const fs::path& index) {
    QFile file(QString::fromStdString(index.string()));
    if (file.size() > kMaxIndexBytes || !file.open(QIODevice::ReadOnly)) return {};
    std::set<std::string> shards;
    const QJsonObject map =
        QJsonDocument::fromJson(file.readAll()).object()["weight_map"].toObject();
    for (auto it = map.begin(); it != map.end(); ++it)
        if (it.value().isString() && isPlainName(it.value().toString().toStdString()))
            shards.insert(it.value().toString().toStdString());
    return shards;
}

// The files a model needs that the snapshot does not have yet.
std::vector<std::string> missingFiles(const fs::path& snapshot) {
    std::error_code error;
    std::vector<std::string> missing;
    if (!fs::exists(snapshot / "config.json", error)) missing.push_back("config.json");
    if (fs::exists(snapshot / "model.safetensors", error)) return missing;
    const fs::path index = snapshot / "model.safetensors.index.json";
    if (!fs::exists(index, error)) {
        missing.push_back("model.safetensors");
        return missing;
    }
    for (const std::string& shard : indexedShards(index))
        if (!fs::exists(snapshot / shard, error)) missing.push_back(shard);
    return missing;
}

struct Incomplete {
    std::string name;
    std::uintmax_t bytes = 0;
};

std::vector<Incomplete> incompleteBlobs(const fs::path& blobs) {
    std::vector<Incomplete> found;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(blobs, error))
        if (endsWith(entry.path().filename().string(), kIncompleteSuffix))
            found.push_back({entry.path().filename().string(), entry.file_size(error)});
    return found;
}

std::string joined(const std::vector<std::string>& names) {
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < kNamesShown; ++i)
        list += (i ? ", " : "") + names[i];
    if (names.size() > kNamesShown)
        list += " and " + std::to_string(names.size() - kNamesShown) + " more";
    return list;
}

void checkLink(const fs::path& link, const fs::path& blobs, const std::string& repoId) {
    std::error_code error;
    const fs::path target = fs::read_symlink(link, error);
    const fs::path resolved = fs::weakly_canonical(link.parent_path() / target, error);
    const std::string what = link.string() + " links to " + target.string();
    if (error || !isInside(resolved, blobs))
        fail(what + ", outside the cache's blobs folder " + blobs.string() +
             "; Headlight reads only files inside the cache");
    if (fs::exists(resolved, error)) return;
    const fs::path partial = resolved.string() + kIncompleteSuffix;
    if (fs::exists(partial, error))
        fail(what + ", which is only partly downloaded (" + partial.filename().string() + ", " +
             std::to_string(fs::file_size(partial, error)) +
             " bytes): finish it with "
             "`huggingface-cli download " +
             repoId + "` while online");
    fail(what + ", which does not exist (a dangling link: the blob was deleted)");
}
} // namespace

HubCacheRoot hubCacheRoot() {
    for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"})
        if (std::string path = environment(name); !path.empty()) return {path, name};
    if (const std::string home = environment("HF_HOME"); !home.empty())
        return {(fs::path(home) / "hub").string(), "HF_HOME"};
    if (const std::string cache = environment("XDG_CACHE_HOME"); !cache.empty())
        return {(fs::path(cache) / "huggingface" / "hub").string(), "XDG_CACHE_HOME"};
    return {(fs::path(environment("HOME")) / ".cache" / "huggingface" / "hub").string(), "default"};
}

std::string snapshotOf(const std::string& repoFolder) {
    const fs::path snapshots = fs::path(repoFolder) / "snapshots";
    std::error_code error;
    const std::string main = readRef(fs::path(repoFolder) / "refs" / "main");
    if (isPlainName(main) && fs::is_directory(snapshots / main, error))
        return (snapshots / main).string();
    fs::path newest;
    fs::file_time_type newestTime;
    for (const fs::directory_entry& entry : fs::directory_iterator(snapshots, error)) {
        if (!entry.is_directory(error)) continue;
        const fs::file_time_type time = entry.last_write_time(error);
        if (newest.empty() || time > newestTime)
            std::tie(newest, newestTime) = std::tie(entry.path(), time);
    }
    if (newest.empty())
        fail(repoFolder + ": no snapshot in snapshots/ (the model was never fully downloaded)");
    return newest.string();
}

void checkSnapshotLinks(const std::string& snapshot, const std::string& repoFolder) {
    std::error_code error;
    const fs::path blobs = fs::weakly_canonical(fs::path(repoFolder) / "blobs", error);
    const std::string repoId = repoIdOf(fs::path(repoFolder));
    for (const fs::directory_entry& entry : fs::directory_iterator(snapshot, error))
        if (entry.is_symlink(error)) checkLink(entry.path(), blobs, repoId);
}

void checkSnapshotDownloaded(const std::string& snapshot, const std::string& repoFolder) {
    const std::vector<Incomplete> partial = incompleteBlobs(fs::path(repoFolder) / "blobs");
    const std::vector<std::string> missing = missingFiles(snapshot);
    if (partial.empty() || missing.empty()) return;
    fail(snapshot + ": " + joined(missing) + " not downloaded yet; " +
         std::to_string(partial.size()) + " download(s) unfinished in blobs/ (" +
         partial.front().name + ", " + std::to_string(partial.front().bytes) +
         " bytes): finish with `huggingface-cli download " + repoIdOf(fs::path(repoFolder)) +
         "` while online");
}

void checkSnapshot(const std::string& snapshot, const std::string& repoFolder) {
    checkSnapshotLinks(snapshot, repoFolder);
    checkSnapshotDownloaded(snapshot, repoFolder);
}

std::vector<CachedModel> listCachedModels(const std::string& cacheRoot) {
    std::vector<CachedModel> models;
    std::error_code error;
    for (const fs::directory_entry& entry : fs::directory_iterator(cacheRoot, error)) {
        if (!isRepoFolder(entry.path())) continue;
        CachedModel model{repoIdOf(entry.path()), entry.path().string(), {}, 0};
        try {
            model.snapshot = snapshotOf(model.repoFolder);
        } catch (const CheckpointError&) {
            // Why: a model with no snapshot is still listed (with its size), as unusable.
        }
        for (const fs::directory_entry& blob :
             fs::directory_iterator(entry.path() / "blobs", error))
            if (blob.is_regular_file(error)) model.bytesOnDisk += int64_t(blob.file_size(error));
        models.push_back(std::move(model));
    }
    std::sort(models.begin(), models.end(),
              [](const CachedModel& a, const CachedModel& b) { return a.repoId < b.repoId; });
    return models;
}

namespace {
// The cache folder of an ORG/NAME id. Throws CheckpointError saying where it looked and which ids
// the cache holds when the id is not there.
fs::path cachedIdFolder(const std::string& repoId) {
    const HubCacheRoot root = hubCacheRoot();
    const fs::path repo = fs::path(root.path) / repoFolderName(repoId);
    if (isRepoFolder(repo)) return repo;
    std::vector<std::string> ids;
    for (const CachedModel& model : listCachedModels(root.path))
        ids.push_back(model.repoId);
    fail("'" + repoId + "' is neither a folder nor a model in the Hugging Face cache (looked for " +
         repo.string() + ", the cache from " + root.source + "); " +
         (ids.empty() ? std::string("the cache holds no models") : "cached: " + joined(ids)) +
         ". Headlight never downloads: fetch it with `huggingface-cli download " + repoId + "`");
}

// A revision name as refs/ may hold it: plain names joined by '/', nothing that leaves refs/.
bool isRevisionName(const std::string& revision) {
    if (revision.empty() || revision.front() == '/' || revision.back() == '/') return false;
    for (std::size_t start = 0, end = 0; start <= revision.size(); start = end + 1) {
        end = std::min(revision.find('/', start), revision.size());
        if (!isPlainName(revision.substr(start, end - start))) return false;
    }
    return true;
}

bool byTrainingStep(const CachedRevision& a, const CachedRevision& b) {
    if (a.step.has_value() != b.step.has_value()) return a.step.has_value();
    if (a.step && *a.step != *b.step) return *a.step < *b.step;
    return a.name < b.name;
}
} // namespace

std::optional<int64_t> trainingStepOf(const std::string& name) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    const std::size_t at = lower.find("step");
    if (at == std::string::npos) return std::nullopt;
    std::size_t digits = at + 4;
    if (digits < lower.size() && (lower[digits] == '_' || lower[digits] == '-')) ++digits;
    std::size_t end = digits;
    while (end < lower.size() && end - digits < 18 && std::isdigit((unsigned char)lower[end]))
        ++end;
    if (end == digits) return std::nullopt;
    return std::stoll(lower.substr(digits, end - digits));
}

std::vector<CachedRevision> listRevisions(const std::string& repoFolder) {
    const fs::path repo(repoFolder);
    std::error_code error;
    std::vector<CachedRevision> revisions;
    std::set<std::string> named;
    for (fs::recursive_directory_iterator it(repo / "refs", error), end; !error && it != end;
         it.increment(error)) {
        if (!it->is_regular_file(error)) continue;
        const std::string commit = readRef(it->path());
        if (!isPlainName(commit) || !fs::is_directory(repo / "snapshots" / commit, error)) continue;
        const std::string name = it->path().lexically_relative(repo / "refs").generic_string();
        revisions.push_back({name, commit, (repo / "snapshots" / commit).string(), {}});
        named.insert(commit);
    }
    for (const fs::directory_entry& entry : fs::directory_iterator(repo / "snapshots", error)) {
        const std::string commit = entry.path().filename().string();
        if (entry.is_directory(error) && !named.count(commit))
            revisions.push_back({commit, commit, entry.path().string(), {}});
    }
    for (CachedRevision& revision : revisions)
        revision.step = trainingStepOf(revision.name);
    std::sort(revisions.begin(), revisions.end(), byTrainingStep);
    return revisions;
}

std::string snapshotOfRevision(const std::string& repoFolder, const std::string& revision) {
    const fs::path repo(repoFolder);
    const std::string repoId = repoIdOf(repo);
    std::error_code error;
    if (isRevisionName(revision)) {
        const fs::path ref = repo / "refs" / revision;
        const std::string commit = fs::is_regular_file(ref, error) ? readRef(ref) : revision;
        if (isPlainName(commit) && fs::is_directory(repo / "snapshots" / commit, error))
            return (repo / "snapshots" / commit).string();
        if (commit != revision)
            fail("refs/" + revision + " of " + repoId + " names commit " + commit +
                 ", whose snapshot is not in the cache: fetch it with `huggingface-cli download " +
                 repoId + " --revision " + revision + "` while online");
    }
    std::vector<std::string> names;
    for (const CachedRevision& cached : listRevisions(repoFolder))
        names.push_back(cached.name);
    fail("'" + revision + "' is not a revision of " + repoId + " in the cache (" + repoFolder +
         "); " +
         (names.empty() ? std::string("it holds none") : "cached revisions: " + joined(names)) +
         ". Headlight never downloads: fetch it with `huggingface-cli download " + repoId +
         " --revision " + revision + "`");
}

std::string cachedRepoId(const std::string& repoFolder) {
    return repoIdOf(fs::path(repoFolder));
}

std::string cachedRepoFolder(const std::string& pathOrId) {
    std::error_code error;
    if (!fs::is_directory(pathOrId, error)) {
        if (!isRepoId(pathOrId)) fail("'" + pathOrId + "' is neither a folder nor an ORG/NAME id");
        return cachedIdFolder(pathOrId).string();
    }
    const fs::path folder = fs::absolute(pathOrId, error).lexically_normal();
    const fs::path named = folder.has_filename() ? folder : folder.parent_path();
    if (isRepoFolder(named)) return named.string();
    if (isSnapshotFolder(named)) return named.parent_path().parent_path().string();
    fail(pathOrId +
         " is a checkpoint folder, not a Hugging Face cache entry, so it has no revisions: give "
         "a cached ORG/NAME id or a models--ORG--NAME folder");
}

ResolvedModel resolveModel(const std::string& pathOrId, const std::string& revision) {
    if (revision.empty()) return resolveModel(pathOrId);
    const std::string repo = cachedRepoFolder(pathOrId);
    const std::string snapshot = snapshotOfRevision(repo, revision);
    checkSnapshot(snapshot, repo);
    return {snapshot, repoIdOf(fs::path(repo)), revision};
}

ResolvedModel resolveModel(const std::string& pathOrId) {
    std::error_code error;
    if (fs::is_directory(pathOrId, error)) {
        const fs::path folder = fs::absolute(pathOrId, error).lexically_normal();
        const fs::path named = folder.has_filename() ? folder : folder.parent_path();
        if (isRepoFolder(named)) {
            const std::string snapshot = snapshotOf(named.string());
            checkSnapshot(snapshot, named.string());
            return {snapshot, repoIdOf(named), {}};
        }
        if (isSnapshotFolder(named)) {
            const fs::path repo = named.parent_path().parent_path();
            checkSnapshot(named.string(), repo.string());
            return {pathOrId, repoIdOf(repo), {}};
        }
        return {pathOrId, {}, {}};
    }
    // Anything else that exists, or that no id could spell, goes to the readers, which say why.
    if (fs::exists(pathOrId, error) || !isRepoId(pathOrId)) return {pathOrId, {}, {}};
    const fs::path repo = cachedIdFolder(pathOrId);
    const std::string snapshot = snapshotOf(repo.string());
    checkSnapshot(snapshot, repo.string());
    return {snapshot, pathOrId, {}};
}

ResolvedModel resolveCachedSubfolder(const std::string& pathOrId) {
    std::error_code error;
    const std::size_t first = pathOrId.find('/');
    const std::size_t second = first == std::string::npos ? first : pathOrId.find('/', first + 1);
    if (fs::exists(pathOrId, error) || second == std::string::npos) return resolveModel(pathOrId);
    const std::string repoId = pathOrId.substr(0, second);
    const fs::path subfolder(pathOrId.substr(second + 1));
    const bool plain = std::all_of(subfolder.begin(), subfolder.end(),
                                   [](const fs::path& part) { return isPlainName(part.string()); });
    // Anything no id and folder could spell goes to the readers, which say why.
    if (!isRepoId(repoId) || subfolder.empty() || !plain) return {pathOrId, {}, {}};
    const ResolvedModel repo = resolveModel(repoId);
    const fs::path folder = fs::path(repo.folder) / subfolder;
    if (!fs::is_directory(folder, error))
        fail("the cached " + repoId + " has no folder " + subfolder.string() + " (looked for " +
             folder.string() + ")");
    checkSnapshotLinks(folder.string(), fs::path(repo.folder).parent_path().parent_path().string());
    return {folder.string(), repoId, {}};
}
} // namespace headlight::io
