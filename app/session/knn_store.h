#pragma once
// The kNN-LM datastore (variants/knn_lm.h) as the window and `headlight export` hold it: built
// from a text file with a loaded model's tokenizer, the same way `headlight inspect --variant`
// builds it, and kept with the text's tokens so that a view can show the text around each
// neighbour. Datastore row r is the context that ends at token r of the text; its stored next
// token is token r + 1 (the chunks overlap by one token, variants::chunkForDatastore).
//
// KnnStoreCache keeps the last store built, so that a pass reuses it while the model, the
// datastore path and the variant (less its knn section) stay the same; the window's File ▸ Build
// kNN datastore… installs a store it built off the GUI thread.

#include "model_session.h"
#include "variants/knn_lm.h"

#include <QList>
#include <QString>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace headlight::app {

struct KnnStore {
    variants::KnnDatastore datastore;
    std::string path;                         // the text file it was built from
    variants::VariantSpec lm;                 // the variant its keys ran with, less the knn section
    std::vector<int32_t> ids;                 // [N + 1] the text's tokens
    std::vector<std::pair<int, int>> offsets; // [N + 1] each token's code points in the text
    QList<uint> codePoints;                   // the text

    int64_t tokenCount() const { return int64_t(ids.size()); }
    // Token `i` of the text as the token strip labels tokens (white space made visible).
    QString label(int64_t i) const;
    // The text's code points [begin, end) (clamped to the text).
    QString text(int begin, int end) const;
};

// Reads `path` (variants::readDatastoreText), tokenizes it without special tokens and builds the
// datastore with `variant` less its knn section. Throws std::exception with a one-line reason
// (variants::DatastoreCancelled when `progress` returns false).
KnnStore readKnnStore(const TransformerModel& model, const tokenize::Tokenizer* tokenizer,
                      const std::string& path, const variants::VariantSpec& variant,
                      const variants::DatastoreProgress& progress = {});

class KnnStoreCache {
public:
    // The store for a pass of `variant` (which has a knn section) on `model`: the cached one
    // when it was built from the same file with the same model and variant, else a new one
    // (built here, on the calling thread, and cached).
    std::shared_ptr<const KnnStore> storeFor(const std::shared_ptr<const LoadedModel>& model,
                                             const variants::VariantSpec& variant);
    // A store built elsewhere (the window's build action) for `model`.
    void install(const std::shared_ptr<const LoadedModel>& model,
                 std::shared_ptr<const KnnStore> store);
    std::shared_ptr<const KnnStore> current() const;

private:
    mutable std::mutex mutex_;
    std::weak_ptr<const LoadedModel> model_;
    std::shared_ptr<const KnnStore> store_;
};

} // namespace headlight::app
