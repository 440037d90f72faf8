#pragma once
// File ▸ Open corpus…: the entropy and JSD violins pooled over a file of texts (one per line),
// with the current model and variant. The texts run on a worker thread one at a time
// (analysis::aggregateCorpus) behind a cancellable progress dialog; the forward runner is paused
// meanwhile because a backend runs one pass at a time. When done, the workspace's violins show
// the corpus.

#include "corpus_analysis.h"

#include <QObject>
#include <QStringList>
#include <memory>

class QAction;
class QProgressDialog;

namespace headlight::app {

class BackgroundJob;
class Workspace;

class CorpusRunner : public QObject {
    Q_OBJECT
public:
    CorpusRunner(Workspace* workspace, QWidget* dialogParent);
    ~CorpusRunner() override;

    // Starts the run; false when there is no model or no text (`why` says which).
    bool start(const QStringList& texts, QString* why = nullptr);
    bool running() const;
    QProgressDialog* progress() const;              // the dialog of the run in flight, if any
    QAction* openAction() const { return open_; }   // File ▸ Open corpus…
    QAction* clearAction() const { return clear_; } // back to the current text's violins

Q_SIGNALS:
    void finished(std::size_t texts, std::size_t failed, bool cancelled);

private:
    void collect(const QString& error);
    void chooseFile();

    Workspace* workspace_;
    QWidget* dialogParent_;
    QAction* open_;
    QAction* clear_;
    PooledCorpus corpus_; // written by the job's work
    std::unique_ptr<BackgroundJob> job_;
};
} // namespace headlight::app
