#pragma once
// The model the window works on: a checkpoint folder loaded on a worker thread (so the window
// never freezes on a large checkpoint), with its tokenizer when the folder has one. A load that
// fails reports one line, and the previous model stays.

#include "backend/backend.h"
#include "circuit_cache.h"
#include "model/memory_budget.h"
#include "model/transformer.h"
#include "tokenize/tokenizer.h"

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <memory>

namespace headlight::app {

struct LoadedModel {
    QString folder; // the folder read: as opened, or the snapshot a Hugging Face cache id names
    QString source; // what was opened: a folder, or an ORG/NAME id of the Hugging Face cache
    QString repoId; // the cache id when the model came from the cache, else empty
    std::unique_ptr<Backend> backend;
    std::unique_ptr<TransformerModel> model;
    std::unique_ptr<tokenize::Tokenizer> tokenizer; // null when the folder has no tokenizer files
    QString backendNote;                            // why the CPU backend is used, if it is
    Tensor positionTable; // the learned position table [P, D], empty when there is none
    WeightBytes weights;  // what the load mapped and widened, for the passes' memory plans
    // The last passes, for the next one to reuse (model/kv_cache.h). Declared after the model and
    // its backend so that its device tensors go first.
    std::unique_ptr<KvCache> passCache = std::make_unique<KvCache>();
    // Its copying and composition scores, once a pass has asked for them (PassExtras::circuits).
    std::unique_ptr<CircuitCache> circuits = std::make_unique<CircuitCache>();
    QString summary() const; // "bert · 12 layers × 12 heads · hidden 768 · cpu"
    QString name() const;    // the cache id, else the folder's name
};

// Opens the backend `choice` names and loads `source` on it (on the CPU when Vulkan fails while
// uploading; backendNote says so): a checkpoint folder, or what io::resolveModel accepts (a
// Hugging Face cache snapshot, models--ORG--NAME folder or ORG/NAME id). Throws std::exception
// with a one-line reason.
std::unique_ptr<LoadedModel> loadCheckpoint(const QString& source, const BackendChoice& choice,
                                            const std::string& deviceSelector);

class ModelSession : public QObject {
    Q_OBJECT
public:
    explicit ModelSession(QObject* parent = nullptr);
    ~ModelSession() override;

    // Starts loading `folder` (or a Hugging Face cache id, as loadCheckpoint takes) with the
    // backend `choice` names; emits loaded() or failed().
    void load(const QString& folder, const BackendChoice& choice,
              const std::string& deviceSelector);
    bool busy() const;
    const LoadedModel* current() const { return current_.get(); }
    // Shared so that a forward pass in flight keeps the model it started with alive when another
    // model replaces it.
    std::shared_ptr<const LoadedModel> shared() const { return current_; }

Q_SIGNALS:
    void loaded(const QString& summary);
    void failed(const QString& folder, const QString& reason);

private:
    struct Result;
    void finish();
    void hashFilesInBackground(const QString& folder);
    void stopHashing();

    QFutureWatcher<std::shared_ptr<Result>>* watcher_;
    std::shared_ptr<LoadedModel> current_;
    // The current model's files being hashed for the exports' provenance (file_hashes.h), on a
    // pool of their own: a minute of hashing must not hold up a pass in the global pool.
    QThreadPool hashPool_;
    QFuture<void> hashing_;
    std::atomic<bool> stopHashing_ = false;
};
} // namespace headlight::app
