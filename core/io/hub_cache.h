#pragma once
// The Hugging Face hub cache, read offline. huggingface_hub lays a downloaded model out as
//
//   <cache>/models--ORG--NAME/blobs/<etag>            the files' bytes (<etag>.incomplete while
//                                                      a download is in progress)
//   <cache>/models--ORG--NAME/refs/main               a file holding the commit hash of main
//   <cache>/models--ORG--NAME/snapshots/<hash>/<file> → ../../blobs/<etag>, relative symlinks
//
// `--model` (and the window) accept a snapshot folder, a models--ORG--NAME folder or a bare
// ORG/NAME id looked up in the cache; this resolves each to a snapshot folder that the
// checkpoint, config and tokenizer readers open like any other folder. Nothing here touches the
// network.

#include <cstdint>
#include <string>
#include <vector>

namespace headlight::io {

struct HubCacheRoot {
    std::string path;   // the hub cache folder (it may not exist)
    std::string source; // how it was found: "HF_HUB_CACHE", "HF_HOME", ... or "default"
};

// $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE (its older name), else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub, as huggingface_hub decides.
HubCacheRoot hubCacheRoot();

struct CachedModel {
    std::string repoId;      // "ORG/NAME" (or "NAME" for the few models without an organisation)
    std::string repoFolder;  // <cache>/models--ORG--NAME
    std::string snapshot;    // the snapshot refs/main names, else the newest; empty when none
    int64_t bytesOnDisk = 0; // every blob, complete or not (what the model takes on the disk)
};

// Every models--* folder of `cacheRoot`, by id; none when the folder does not exist.
std::vector<CachedModel> listCachedModels(const std::string& cacheRoot);

// The model folder of a cache entry: `repoFolder`'s refs/main snapshot, else its newest. Throws
// CheckpointError when it has no snapshot.
std::string snapshotOf(const std::string& repoFolder);

// Refuses a snapshot Headlight should not read: a file that is a symlink leading outside
// `repoFolder`'s blobs folder, or a dangling symlink (naming its blobs/<etag>.incomplete when the
// download of that file was interrupted). Throws CheckpointError with one line.
void checkSnapshotLinks(const std::string& snapshot, const std::string& repoFolder);

// Refuses a snapshot still missing config.json or weights while blobs/*.incomplete exist (a
// running or interrupted download: huggingface_hub links a file only once it is complete).
void checkSnapshotDownloaded(const std::string& snapshot, const std::string& repoFolder);

// Both checks above.
void checkSnapshot(const std::string& snapshot, const std::string& repoFolder);

struct ResolvedModel {
    std::string folder; // the folder to read: as given, or a checked cache snapshot
    std::string repoId; // the cache id when the model came from the cache, else empty
};

// What `--model` names: a checkpoint folder (returned as is), a cache snapshot folder, a
// models--ORG--NAME folder, or an ORG/NAME id in hubCacheRoot(). Throws CheckpointError saying
// where it looked and which ids the cache holds when an id is not there.
ResolvedModel resolveModel(const std::string& pathOrId);

// What `--sae` names: anything resolveModel takes, or ORG/NAME/SUB/FOLDER, one folder of a cached
// repository that holds several (an SAE release's `blocks.8.hook_resid_pre/`), in the snapshot
// resolveModel picks, its links checked as a snapshot's are. Throws CheckpointError naming the
// folder it looked for when the snapshot has no such folder.
ResolvedModel resolveCachedSubfolder(const std::string& pathOrId);
} // namespace headlight::io
