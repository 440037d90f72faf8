#pragma once
// Builds, off the GUI thread, the map (or rollout) a view of a long pass needs before it draws
// (app/figures/streamed_figures.h): the pass kept queries and keys, not maps, and one head's map
// at 4,096 tokens takes a moment. One loader per pass's owner: the workspace's (its views,
// compare mode's A and presentation mode ask it) and compare mode's B. One build runs at a time;
// when it ends its owner redraws, and a selection that changed meanwhile starts its own build
// then (the newest request wins; a stale map is kept, not drawn). Choosing a layer or head never
// reruns the model.

#include "figure_builders.h"

#include <QFutureWatcher>
#include <QObject>
#include <memory>

class QThreadPool;

namespace headlight::app {

class StreamedViewLoader : public QObject {
    Q_OBJECT
public:
    explicit StreamedViewLoader(QObject* parent = nullptr);
    ~StreamedViewLoader() override;

    // True when `kind` can be drawn from `result` now; else starts building what it needs (unless
    // a build is running) and returns false: ready() follows.
    bool ensure(ViewKind kind, const std::shared_ptr<const ForwardResult>& result,
                const ViewState& state);
    bool busy() const;
    // The threads every loader builds on (not Qt's global pool: see the .cpp).
    static QThreadPool* pool();

Q_SIGNALS:
    void ready(); // a build finished: redraw

private:
    QFutureWatcher<void>* watcher_;
};
} // namespace headlight::app
