#include "knn_datastore_builder.h"

#include "workspace.h"

#include <QAction>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QJsonObject>
#include <QMessageBox>
#include <QProgressDialog>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace headlight::app {

struct KnnDatastoreBuilder::Outcome {
    std::shared_ptr<const KnnStore> store; // null when cancelled or failed
    std::shared_ptr<const LoadedModel> model;
    QString error; // one line; empty when built or cancelled
};

KnnDatastoreBuilder::KnnDatastoreBuilder(Workspace* workspace, QWidget* dialogParent)
    : QObject(workspace)
    , workspace_(workspace)
    , dialogParent_(dialogParent)
    , build_(new QAction(tr("Build &kNN datastore from text file…"), this))
    , watcher_(new QFutureWatcher<std::shared_ptr<Outcome>>(this)) {
    build_->setObjectName(QStringLiteral("buildKnnDatastore"));
    build_->setStatusTip(tr("kNN-LM: store the model's state before every token of a text, and "
                            "mix the next tokens of the nearest ones into the prediction"));
    connect(build_, &QAction::triggered, this, &KnnDatastoreBuilder::chooseFile);
    connect(watcher_, &QFutureWatcherBase::finished, this, &KnnDatastoreBuilder::collect);
}

KnnDatastoreBuilder::~KnnDatastoreBuilder() {
    cancel_ = true;
    watcher_->waitForFinished();
}

QProgressDialog* KnnDatastoreBuilder::progress() const {
    return progress_;
}

bool KnnDatastoreBuilder::running() const {
    return watcher_->isRunning();
}

void KnnDatastoreBuilder::chooseFile() {
    const QString path =
        QFileDialog::getOpenFileName(dialogParent_, tr("Build kNN datastore from text file"),
                                     QString(), tr("Text (*.txt);;All (*)"));
    if (path.isEmpty()) return;
    QString why;
    if (!start(path, &why))
        QMessageBox::warning(dialogParent_, tr("Cannot build the datastore"), why);
}

bool KnnDatastoreBuilder::start(const QString& path, QString* why) {
    std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    if (!model || running()) {
        if (why)
            *why = !model ? tr("Open a checkpoint first.") : tr("A datastore is already building.");
        return false;
    }
    workspace_->runner().setPaused(true);
    workspace_->runner().waitForIdle();
    cancel_ = false;
    path_ = path;
    progress_ = new QProgressDialog(tr("Building the kNN datastore from %1…").arg(path),
                                    tr("Cancel"), 0, 0, dialogParent_);
    progress_->setWindowTitle(tr("kNN datastore"));
    progress_->setWindowModality(Qt::WindowModal);
    progress_->setMinimumDuration(0);
    progress_->setAttribute(Qt::WA_DeleteOnClose);
    connect(progress_, &QProgressDialog::canceled, this, [this] { cancel_ = true; });
    progress_->show();
    const variants::VariantSpec variant = workspace_->variant();
    watcher_->setFuture(QtConcurrent::run([this, model, variant, path] {
        auto outcome = std::make_shared<Outcome>();
        outcome->model = model;
        const auto progress = [this](int64_t done, int64_t total) {
            QMetaObject::invokeMethod(this, [this, done, total] {
                if (!progress_) return;
                progress_->setMaximum(int(total));
                progress_->setValue(int(done));
            });
            return !cancel_;
        };
        try {
            outcome->store = std::make_shared<const KnnStore>(readKnnStore(
                *model->model, model->tokenizer.get(), path.toStdString(), variant, progress));
        } catch (const variants::DatastoreCancelled&) {
        } catch (const std::exception& error) {
            outcome->error = QString::fromUtf8(error.what()).section('\n', 0, 0);
        }
        return outcome;
    }));
    return true;
}

void KnnDatastoreBuilder::collect() {
    const std::shared_ptr<Outcome> outcome = watcher_->result();
    // Why check the flag again: a cancel that came after the last chunk still keeps the old store.
    // Why before closing the dialog: closing it emits canceled().
    const bool built = outcome->store && !cancel_;
    if (progress_) progress_->close();
    if (built) workspace_->runner().knnCache().install(outcome->model, outcome->store);
    workspace_->runner().setPaused(false);
    if (!outcome->error.isEmpty())
        QMessageBox::warning(dialogParent_, tr("Cannot build the datastore"), outcome->error);
    Q_EMIT finished(built, path_, outcome->error);
}

QJsonObject withKnnDatastore(QJsonObject spec, const QString& path) {
    QJsonObject knn = spec.value(QStringLiteral("knn")).toObject();
    knn[QStringLiteral("datastore")] = path;
    spec[QStringLiteral("knn")] = knn;
    return spec;
}
} // namespace headlight::app
