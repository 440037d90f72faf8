#include "streamed_view_loader.h"

#include "streamed_figures.h"

#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

namespace headlight::app {

StreamedViewLoader::StreamedViewLoader(QObject* parent)
    : QObject(parent)
    , watcher_(new QFutureWatcher<void>(this)) {
    connect(watcher_, &QFutureWatcherBase::finished, this, &StreamedViewLoader::ready);
}

StreamedViewLoader::~StreamedViewLoader() {
    watcher_->waitForFinished();
}

QThreadPool* StreamedViewLoader::pool() {
    // Why not Qt's global pool: painting a smoothly scaled pixmap (Qt 6.4's image scaling) splits
    // the work across the global pool and waits for it on the GUI thread, so while a forward pass
    // and a map build filled it (both its threads on a two-core machine) a repaint would wait for
    // one of them. Two threads: one build at a time for each loader, the workspace's and compare
    // mode's B; each build spreads its rows over OpenMP's threads.
    static QThreadPool* const maps = [] {
        static QThreadPool pool;
        pool.setMaxThreadCount(2);
        return &pool;
    }();
    return maps;
}

bool StreamedViewLoader::busy() const {
    return watcher_->isRunning();
}

bool StreamedViewLoader::ensure(ViewKind kind, const std::shared_ptr<const ForwardResult>& result,
                                const ViewState& state) {
    if (!result || streamedViewReady(kind, *result, state)) return true;
    if (busy()) return false;
    // Why the result is captured: it (and its queries and keys) must outlive a newer pass.
    watcher_->setFuture(QtConcurrent::run(
        pool(), [result, kind, state] { buildStreamedView(kind, *result, state); }));
    return false;
}
} // namespace headlight::app
