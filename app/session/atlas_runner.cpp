#include "atlas_runner.h"

#include "analysis/atlas_variant.h"
#include "counted.h"
#include "forward_runner.h"
#include "text_input.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

namespace headlight::app {
namespace {

struct AtlasPass {
    QString text;
    variants::VariantSpec variant;
    int layer = 0;
    int head = 0;
    quint64 serial = 0;
    std::shared_ptr<std::atomic<quint64>> latest;
    QPointer<AtlasRunner> runner;
};

// Runs `signal` on the runner's thread, if the runner still exists.
template <typename Emit> void tell(const QPointer<AtlasRunner>& runner, Emit emit) {
    QMetaObject::invokeMethod(
        runner,
        [runner, emit] {
            if (runner) emit(runner.data());
        },
        Qt::QueuedConnection);
}

// Refuses a pass whose memory plan does not fit; tells the runner a long pass's plan.
void checkPlan(const LoadedModel& model, const AtlasPass& request, const CaptureRequest& capture,
               int64_t tokens) {
    const MemoryPlan plan = planPass(model, tokens, capture);
    if (!plan.fits())
        throw std::runtime_error("not enough memory for this pass: " + describePlan(plan) +
                                 ": shorten the text or close other programs");
    if (tokens < ForwardRunner::kLongPassTokens) return;
    tell(request.runner, [text = QString::fromStdString(describePlan(plan))](AtlasRunner* runner) {
        Q_EMIT runner->planned(text);
    });
}

std::shared_ptr<const analysis::AttentionAtlas> buildAtlas(const LoadedModel& model,
                                                           const AtlasPass& request,
                                                           const ModelInput& input,
                                                           AtlasResult& result) {
    CaptureRequest capture;
    capture.probabilities = false;
    capture.queriesKeys = true;
    capture.layers = {request.layer};
    capture.finalState = false; // the layers after the one drawn cannot change it: they do not run
    checkPlan(model, request, capture, result.tokens);
    const Trace trace = model.model->forward(input, capture, request.variant);
    result.forwardMs = trace.forwardMs;
    analysis::AtlasInput atlasInput =
        analysis::atlasInputOf(trace.layers[std::size_t(request.layer)], model.model->spec(),
                               trace.valid, request.variant, request.layer);
    int reported = -1;
    const auto progress = [&request, &reported](double share) {
        const int percent = int(share * 100.0);
        if (percent != reported) {
            reported = percent;
            tell(request.runner, [share](AtlasRunner* runner) { Q_EMIT runner->progress(share); });
        }
        return request.latest->load() == request.serial;
    };
    QElapsedTimer clock;
    clock.start();
    auto atlas = std::make_shared<const analysis::AttentionAtlas>(std::move(atlasInput),
                                                                  request.head, progress);
    result.atlasMs = double(clock.nsecsElapsed()) / 1e6;
    return atlas;
}

std::shared_ptr<AtlasResult> runAtlasPass(const std::shared_ptr<const LoadedModel>& model,
                                          const AtlasPass& request) {
    auto result = std::make_shared<AtlasResult>();
    result->serial = request.serial;
    result->text = request.text;
    result->layer = request.layer;
    result->head = request.head;
    result->model = model;
    try {
        PreparedText prepared = prepareText(model->tokenizer.get(), request.text);
        result->tokens = int64_t(prepared.input.ids.size());
        if (result->tokens == 0) throw std::runtime_error("the text produced no tokens");
        result->atlas = buildAtlas(*model, request, prepared.input, *result);
        result->labels = std::move(prepared.labels);
    } catch (const analysis::AttentionAtlas::Cancelled&) {
        result->cancelled = true;
    } catch (const std::exception& error) {
        result->error = QString::fromUtf8(error.what()).section('\n', 0, 0);
    }
    return result;
}
} // namespace

QString positionLimitText(const LoadedModel& model) {
    const ModelSpec& spec = model.model->spec();
    if (!model.positionTable.empty())
        return QObject::tr("%1 (learned position table)")
            .arg(counted(spec.maxPositions - spec.positionOffset, QObject::tr("position")));
    if (spec.positions == PositionsKind::Rotary) return QObject::tr("none (rotary positions)");
    return QObject::tr("none (no learned position table)");
}

AtlasRunner::AtlasRunner(QObject* parent)
    : QObject(parent)
    , watcher_(new QFutureWatcher<std::shared_ptr<AtlasResult>>(this)) {
    connect(watcher_, &QFutureWatcherBase::finished, this, &AtlasRunner::collect);
}

AtlasRunner::~AtlasRunner() {
    latest_->store(++requested_); // the pass in flight stops at its next report
    watcher_->waitForFinished();
}

void AtlasRunner::setModel(std::shared_ptr<const LoadedModel> model) {
    model_ = std::move(model);
}

void AtlasRunner::setVariant(const variants::VariantSpec& variant) {
    variant_ = variant;
}

void AtlasRunner::request(const QString& text, int layer, int head) {
    text_ = text;
    layer_ = layer;
    head_ = head;
    latest_->store(++requested_);
    launch();
}

void AtlasRunner::cancel() {
    latest_->store(++requested_);
    launched_ = requested_; // nothing pending
}

void AtlasRunner::setHeld(bool held) {
    held_ = held;
    if (!held) launch();
}

bool AtlasRunner::busy() const {
    return watcher_->isRunning();
}

void AtlasRunner::launch() {
    if (!model_ || held_ || busy() || launched_ == requested_) return;
    launched_ = requested_;
    const AtlasPass request{text_, variant_, layer_, head_, launched_, latest_, this};
    watcher_->setFuture(QtConcurrent::run(runAtlasPass, model_, request));
    Q_EMIT busyChanged(true);
}

void AtlasRunner::collect() {
    const std::shared_ptr<AtlasResult> result = watcher_->result();
    Q_EMIT busyChanged(false);
    if (result->serial != requested_ || result->cancelled) {
        launch();
        return;
    }
    if (!result->error.isEmpty())
        Q_EMIT failed(result->error, result->tokens);
    else
        Q_EMIT finished(result);
}
} // namespace headlight::app
