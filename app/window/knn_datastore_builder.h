#pragma once
// File ▸ Build kNN datastore from text file…: the kNN-LM datastore (variants/knn_lm.h) built from
// a text file with the current model and variant, on a worker thread behind a progress dialog
// (one step per chunk of the model's positions) that can cancel it. The forward runner is paused
// meanwhile, since a backend runs one pass at a time. A finished build goes into the runner's
// store cache and the variant gains (or keeps) a knn section that reads the file, so the next
// passes run kNN-LM with it; a cancelled or failed build leaves the previous datastore in place.

#include "knn_store.h"

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <memory>

class QAction;
class QProgressDialog;

namespace headlight::app {

class BackgroundJob;
class Workspace;

class KnnDatastoreBuilder : public QObject {
    Q_OBJECT
public:
    KnnDatastoreBuilder(Workspace* workspace, QWidget* dialogParent);
    ~KnnDatastoreBuilder() override;

    QAction* buildAction() const { return build_; }
    // Starts building from `path`; false (and `why`) when there is no model or a build runs.
    bool start(const QString& path, QString* why = nullptr);
    void cancel();
    bool running() const;
    QProgressDialog* progress() const; // the dialog of the build in flight, if any

Q_SIGNALS:
    // After each build: `built` false when it was cancelled or failed (`error` then says why,
    // empty when cancelled). The knn section is applied through the variant panel by the window.
    void finished(bool built, const QString& path, const QString& error);

private:
    void chooseFile();
    void collect(const QString& error);

    Workspace* workspace_;
    QWidget* dialogParent_;
    QAction* build_;
    QString path_;
    std::shared_ptr<const LoadedModel> model_; // the model the build in flight reads
    std::shared_ptr<const KnnStore> store_;    // written by the job's work; null until built
    std::unique_ptr<BackgroundJob> job_;
};

// `spec` with a knn section that reads `path`: its own k, lambda and temperature when it has
// one, else the catalogue's defaults.
QJsonObject withKnnDatastore(QJsonObject spec, const QString& path);
} // namespace headlight::app
