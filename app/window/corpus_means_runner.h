#pragma once
// The head means of a corpus for mean-corpus knockouts (app/session/corpus_head_means.h), run
// from the knockout grid: one pass per text of a file (one text per line) with the current model
// and variant on a worker thread, behind a progress dialog whose Cancel stops between texts. The
// forward runner is paused meanwhile, because a backend runs one pass at a time.

#include "corpus_head_means.h"

#include <QObject>
#include <memory>
#include <optional>

class QProgressDialog;
class QWidget;

namespace headlight::app {

class BackgroundJob;
class Workspace;

class CorpusMeansRunner : public QObject {
    Q_OBJECT
public:
    CorpusMeansRunner(Workspace* workspace, QWidget* dialogParent);
    ~CorpusMeansRunner() override;

    // Reads `path` and starts; false (with `why`) when there is no model, the file cannot be
    // read or has no text, or a run is in flight.
    bool start(const QString& path, QString* why = nullptr);
    bool running() const;
    QProgressDialog* progress() const; // the dialog of the run in flight, if any

Q_SIGNALS:
    void finished(std::shared_ptr<const CorpusHeadMeans> means); // null when cancelled
    void failed(const QString& reason);

private:
    void collect(const QString& error);

    Workspace* workspace_;
    std::optional<CorpusHeadMeans> means_; // written by the job's work
    std::unique_ptr<BackgroundJob> job_;
};
} // namespace headlight::app
