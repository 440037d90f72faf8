#include "model_session.h"

#include "backend/backend_factory.h"
#include "backend/vulkan/vk_error.h"
#include "counted.h"
#include "file_hashes.h"
#include "io/checkpoint.h"
#include "io/hub_cache.h"
#include "model/model_family.h"

#include <QDir>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace headlight::app {

struct ModelSession::Result {
    QString folder;
    std::unique_ptr<LoadedModel> model; // null on failure
    QString error;
};

QString LoadedModel::summary() const {
    const ModelSpec& s = model->spec();
    return QStringLiteral("%1 (%2) · %3 × %4 · hidden %5 · %6")
        .arg(QString::fromLatin1(familyOf(s.architecture).displayName),
             QString::fromLatin1(architectureName(s.architecture)),
             counted(s.layers, QStringLiteral("layer")), counted(s.heads, QStringLiteral("head")))
        .arg(s.hidden)
        .arg(QString::fromLatin1(backendName(backend->kind())));
}

QString LoadedModel::name() const {
    return repoId.isEmpty() ? QFileInfo(QDir::cleanPath(folder)).fileName() : repoId;
}

std::unique_ptr<LoadedModel> loadCheckpoint(const QString& source, const BackendChoice& choice,
                                            const std::string& deviceSelector) {
    const io::ResolvedModel resolved = io::resolveModel(source.toStdString());
    const QString folder = QString::fromStdString(resolved.folder);
    auto loaded = std::make_unique<LoadedModel>();
    loaded->folder = folder;
    loaded->source = source;
    loaded->repoId = QString::fromStdString(resolved.repoId);
    OpenedBackend opened = openBackend(choice, deviceSelector);
    loaded->backend = std::move(opened.backend);
    loaded->backendNote = QString::fromStdString(opened.note);
    try {
        loaded->model = loadModel(folder.toStdString(), *loaded->backend);
    } catch (const vk::VulkanError& error) {
        // Out of device memory or a failed pipeline while uploading: keep going on the CPU.
        loaded->backend = makeCpuBackend();
        loaded->backendNote =
            QString("Vulkan failed (%1); using the CPU backend").arg(error.what());
        loaded->model = loadModel(folder.toStdString(), *loaded->backend);
    }
    loaded->positionTable = loaded->model->positionTable();
    loaded->weights = weightBytes(io::Checkpoint(folder.toStdString()),
                                  loaded->model->spec()); // headers only
    try {
        loaded->tokenizer = tokenize::Tokenizer::load(folder.toStdString());
    } catch (const tokenize::TokenizerError&) {
        // Why: a checkpoint without tokenizer files still runs on ids; the views say so.
    }
    return loaded;
}

ModelSession::ModelSession(QObject* parent)
    : QObject(parent)
    , watcher_(new QFutureWatcher<std::shared_ptr<Result>>(this)) {
    connect(watcher_, &QFutureWatcherBase::finished, this, &ModelSession::finish);
    hashPool_.setMaxThreadCount(1);
}

ModelSession::~ModelSession() {
    watcher_->waitForFinished();
    stopHashing();
}

bool ModelSession::busy() const {
    return watcher_->isRunning();
}

void ModelSession::load(const QString& folder, const BackendChoice& choice,
                        const std::string& deviceSelector) {
    watcher_->waitForFinished();
    watcher_->setFuture(QtConcurrent::run([folder, choice, deviceSelector] {
        auto result = std::make_shared<Result>();
        result->folder = folder;
        try {
            result->model = loadCheckpoint(folder, choice, deviceSelector);
        } catch (const std::exception& error) {
            result->error = QString::fromUtf8(error.what());
        }
        return result;
    }));
}

void ModelSession::hashFilesInBackground(const QString& folder) {
    stopHashing();
    hashing_ = QtConcurrent::run(&hashPool_, [this, folder] {
        try {
            hashModelFiles(folder, &stopHashing_);
        } catch (const FileHashError&) {
            // Why ignored: the model loaded; an export that needs the hash reports the reason.
        }
    });
}

void ModelSession::stopHashing() {
    stopHashing_ = true;
    hashing_.waitForFinished();
    stopHashing_ = false;
}

void ModelSession::finish() {
    const std::shared_ptr<Result> result = watcher_->result();
    if (!result->model) {
        Q_EMIT failed(result->folder, result->error);
        return;
    }
    current_ = std::move(result->model);
    hashFilesInBackground(current_->folder);
    Q_EMIT loaded(current_->summary());
}
} // namespace headlight::app
