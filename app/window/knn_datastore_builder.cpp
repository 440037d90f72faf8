#include "knn_datastore_builder.h"

#include "background_job.h"
#include "workspace.h"

#include <QAction>
#include <QFileDialog>
#include <QJsonObject>
#include <QMessageBox>

namespace headlight::app {

KnnDatastoreBuilder::KnnDatastoreBuilder(Workspace* workspace, QWidget* dialogParent)
    : QObject(workspace)
    , workspace_(workspace)
    , dialogParent_(dialogParent)
    , build_(new QAction(tr("Build &kNN datastore from text file…"), this))
    , job_(std::make_unique<BackgroundJob>(workspace, dialogParent)) {
    build_->setObjectName(QStringLiteral("buildKnnDatastore"));
    build_->setStatusTip(tr("kNN-LM: store the model's state before every token of a text, and "
                            "mix the next tokens of the nearest ones into the prediction"));
    connect(build_, &QAction::triggered, this, &KnnDatastoreBuilder::chooseFile);
    connect(job_.get(), &BackgroundJob::ended, this, &KnnDatastoreBuilder::collect);
}

KnnDatastoreBuilder::~KnnDatastoreBuilder() = default;

void KnnDatastoreBuilder::cancel() {
    job_->cancel();
}

QProgressDialog* KnnDatastoreBuilder::progress() const {
    return job_->progress();
}

bool KnnDatastoreBuilder::running() const {
    return job_->running();
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
    path_ = path;
    model_ = model;
    store_.reset();
    const variants::VariantSpec variant = workspace_->variant();
    job_->start(tr("kNN datastore"), tr("Building the kNN datastore from %1…").arg(path), 0,
                [this, model, variant, path](const BackgroundJob::Progress& progress) {
                    try {
                        store_ = std::make_shared<const KnnStore>(
                            readKnnStore(*model->model, model->tokenizer.get(), path.toStdString(),
                                         variant, progress));
                    } catch (const variants::DatastoreCancelled&) {
                    }
                });
    return true;
}

// Why check cancelled() too: a cancel that came after the last chunk still keeps the old store.
void KnnDatastoreBuilder::collect(const QString& error) {
    const bool built = store_ && !job_->cancelled();
    if (built) workspace_->runner().knnCache().install(model_, store_);
    if (!error.isEmpty())
        QMessageBox::warning(dialogParent_, tr("Cannot build the datastore"), error);
    Q_EMIT finished(built, path_, error);
}

QJsonObject withKnnDatastore(QJsonObject spec, const QString& path) {
    QJsonObject knn = spec.value(QStringLiteral("knn")).toObject();
    knn[QStringLiteral("datastore")] = path;
    spec[QStringLiteral("knn")] = knn;
    return spec;
}
} // namespace headlight::app
