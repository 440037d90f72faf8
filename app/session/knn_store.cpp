#include "knn_store.h"

#include "text_input.h"

#include <algorithm>

namespace headlight::app {

QString KnnStore::label(int64_t i) const {
    const auto [begin, end] = offsets[std::size_t(i)];
    const QString slice = textSliceLabel(codePoints, begin, end);
    return slice.isEmpty() ? QStringLiteral("#%1").arg(ids[std::size_t(i)]) : slice;
}

QString KnnStore::text(int begin, int end) const {
    begin = std::clamp(begin, 0, int(codePoints.size()));
    end = std::clamp(end, begin, int(codePoints.size()));
    return QString::fromUcs4(reinterpret_cast<const char32_t*>(codePoints.data()) + begin,
                             end - begin);
}

KnnStore readKnnStore(const TransformerModel& model, const tokenize::Tokenizer* tokenizer,
                      const std::string& path, const variants::VariantSpec& variant,
                      const variants::DatastoreProgress& progress) {
    if (!tokenizer)
        throw variants::VariantError(
            "kNN-LM: this checkpoint has no tokenizer to read the datastore text with");
    const std::string text = variants::readDatastoreText(path);
    const tokenize::Encoding encoding = tokenizer->encode(text, std::nullopt, false);
    KnnStore store;
    store.path = path;
    store.ids.assign(encoding.ids.begin(), encoding.ids.end());
    store.offsets = encoding.offsets;
    store.codePoints = QString::fromStdString(text).toUcs4();
    store.lm = variant;
    store.lm.knn.reset();
    store.datastore = variants::buildDatastore(
        model, variants::chunkForDatastore(store.ids, variants::datastoreChunkLength(model.spec())),
        variant, progress);
    return store;
}

std::shared_ptr<const KnnStore>
KnnStoreCache::storeFor(const std::shared_ptr<const LoadedModel>& model,
                        const variants::VariantSpec& variant) {
    const std::lock_guard lock(mutex_);
    variants::VariantSpec lm = variant;
    lm.knn.reset();
    if (store_ && model_.lock() == model && store_->path == variant.knn->datastore &&
        store_->lm == lm)
        return store_;
    store_ = std::make_shared<const KnnStore>(
        readKnnStore(*model->model, model->tokenizer.get(), variant.knn->datastore, variant));
    model_ = model;
    return store_;
}

void KnnStoreCache::install(const std::shared_ptr<const LoadedModel>& model,
                            std::shared_ptr<const KnnStore> store) {
    const std::lock_guard lock(mutex_);
    model_ = model;
    store_ = std::move(store);
}

std::shared_ptr<const KnnStore> KnnStoreCache::current() const {
    const std::lock_guard lock(mutex_);
    return store_;
}
} // namespace headlight::app
