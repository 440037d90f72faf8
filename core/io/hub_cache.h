#pragma once
// The Hugging Face hub cache, read offline. huggingface_hub lays a downloaded model out as
//
//   <cache>/models--ORG--NAME/blobs/<etag>            the files' bytes (<etag>.incomplete while
//                                                      a download is in progress)
//   <cache>/models--ORG--NAME/refs/main               a file holding the commit hash of main
//   <cache>/models--ORG--NAME/refs/<branch or tag>    the same for every other revision fetched
//                                                      by name (Pythia's refs/step1000); a
//                                                      revision fetched by its commit hash has
//                                                      no ref, only its snapshot
//   <cache>/models--ORG--NAME/snapshots/<hash>/<file> → ../../blobs/<etag>, relative symlinks
//
// `--model` (and the window) accept a snapshot folder, a models--ORG--NAME folder or a bare
// ORG/NAME id looked up in the cache; this resolves each to a snapshot folder that the
// checkpoint, config and tokenizer readers open like any other folder. Nothing here touches the
// network.

#include <cstdint>
#include <optional>
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
    std::string folder;   // the folder to read: as given, or a checked cache snapshot
    std::string repoId;   // the cache id when the model came from the cache, else empty
    std::string revision; // the revision asked for (resolveModel's second form), else empty
};

// What `--model` names: a checkpoint folder (returned as is), a cache snapshot folder, a
// models--ORG--NAME folder, or an ORG/NAME id in hubCacheRoot(). Throws CheckpointError saying
// where it looked and which ids the cache holds when an id is not there.
ResolvedModel resolveModel(const std::string& pathOrId);

// One revision of a cached repository: a ref and the snapshot it names, or a snapshot no ref
// names (fetched by its commit hash), named by that hash.
struct CachedRevision {
    std::string name;            // "main", "step1000", "pr/1", or the commit hash
    std::string commit;          // the snapshot folder's name
    std::string snapshot;        // <repoFolder>/snapshots/<commit>
    std::optional<int64_t> step; // the training step the name gives, trainingStepOf(name)
};

// The number after "step" in a revision's name, as Pythia names its checkpoints ("step1000",
// also "step_1000", "step-1000", any case); none when the name has none.
std::optional<int64_t> trainingStepOf(const std::string& name);

// Every revision of `repoFolder` whose snapshot is in the cache: each file under refs/ (nested
// names such as pr/1 included) and each snapshot no ref names. Ordered by training step where
// the name gives one (step0, step1, step2, step4, …, step143000), then the others by name.
std::vector<CachedRevision> listRevisions(const std::string& repoFolder);

// The snapshot of `revision` in `repoFolder`: the one refs/<revision> names, else
// snapshots/<revision> when the revision is a commit hash, as huggingface_hub's
// try_to_load_from_cache looks them up. Throws CheckpointError, one line naming the revisions the
// cache holds.
std::string snapshotOfRevision(const std::string& repoFolder, const std::string& revision);

// The models--ORG--NAME folder that a repo folder, a snapshot folder or a cached ORG/NAME id
// names. Throws CheckpointError: an id not in the cache (as resolveModel), or a plain checkpoint
// folder, which has no revisions.
std::string cachedRepoFolder(const std::string& pathOrId);

// "ORG/NAME" of a models--ORG--NAME folder.
std::string cachedRepoId(const std::string& repoFolder);

// resolveModel at one revision (a branch, tag or commit hash) of a cached repository; an empty
// revision is resolveModel(pathOrId). The snapshot's links are checked as resolveModel's.
ResolvedModel resolveModel(const std::string& pathOrId, const std::string& revision);

// What `--sae` names: anything resolveModel takes, or ORG/NAME/SUB/FOLDER, one folder of a cached
// repository that holds several (an SAE release's `blocks.8.hook_resid_pre/`), in the snapshot
// resolveModel picks, its links checked as a snapshot's are. Throws CheckpointError naming the
// folder it looked for when the snapshot has no such folder.
ResolvedModel resolveCachedSubfolder(const std::string& pathOrId);
} // namespace headlight::io
