#include "streamed_view_loader.h"

#include "streamed_figures.h"

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

bool StreamedViewLoader::busy() const {
    return watcher_->isRunning();
}

bool StreamedViewLoader::ensure(ViewKind kind, const std::shared_ptr<const ForwardResult>& result,
                                const ViewState& state) {
    if (!result || streamedViewReady(kind, *result, state)) return true;
    if (busy()) return false;
    // Why the result is captured: it (and its queries and keys) must outlive a newer pass.
    watcher_->setFuture(
        QtConcurrent::run([result, kind, state] { buildStreamedView(kind, *result, state); }));
    return false;
}
} // namespace headlight::app
