#include "forward_runner.h"

#include "analysis/streamed_attention.h"
#include "text_input.h"

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>
#include <optional>

namespace headlight::app {
namespace {

struct Request : PassRequest {
    QString text;
    variants::VariantSpec variant;
    quint64 serial = 0;
    QPointer<ForwardRunner> runner; // told the plan of a long pass; null for runForwardPass
};

// The knockouts as the plan takes them, replace ones filled from the source text's pass and
// mean-corpus ones from the corpus means.
variants::Intervention interventionFor(const LoadedModel& model, const Request& request,
                                       int64_t tokens) {
    if (request.knockouts.empty()) return {};
    std::optional<ModelInput> source;
    if (!request.knockouts.source.isEmpty())
        source = prepareText(model.tokenizer.get(), request.knockouts.source).input;
    variants::Intervention intervention =
        resolveAblations(*model.model, request.variant, request.knockouts.heads,
                         source ? &*source : nullptr, tokens, request.knockouts.corpusMeans.get());
    for (const analysis::ResidualEditSpec& spec : request.knockouts.edits)
        for (analysis::HookedEdit& hooked : analysis::residualEditsOf(spec, model.model->spec()))
            intervention.edits.push_back(std::move(hooked.edit));
    return intervention;
}

// The knocked-out pass's logits against the same pass without knockouts.
void compareOutputs(const LoadedModel& model, const Request& request, const ModelInput& input,
                    const Trace& trace, ForwardResult& result) {
    if (!hasLanguageModelHead(*model.model)) {
        result.outputNote = QString::fromUtf8(noLanguageModelHeadReason());
        return;
    }
    CaptureRequest logits;
    logits.probabilities = false;
    logits.logits = true;
    const Trace clean = model.model->forwardCached(*model.passCache, input, logits, request.variant,
                                                   {}, request.control);
    result.outputChange = outputChange(clean.logits, trace.logits);
}

// Refuses, with the plan's numbers, a pass that would not fit; tells the runner a long pass's plan.
bool passFits(const LoadedModel& model, const Request& request, int64_t tokens,
              const CaptureRequest& capture, ForwardResult& result) {
    const MemoryPlan plan = planPass(model, tokens, capture);
    if (!plan.fits()) {
        result.error =
            QString::fromStdString("not enough memory for this pass: " + describePlan(plan) +
                                   ": shorten the text or close other programs");
        result.refusedForMemory = true;
        result.model.reset(); // as after any error, only serial, text and error are set
        result.variant = {};
        return false;
    }
    if (tokens < ForwardRunner::kLongPassTokens) return true;
    result.memoryPlan = QString::fromStdString(describePlan(plan));
    if (const QPointer<ForwardRunner> runner = request.runner)
        QMetaObject::invokeMethod(
            runner,
            [runner, text = result.memoryPlan] {
                if (runner) Q_EMIT runner->planned(text);
            },
            Qt::QueuedConnection);
    return true;
}

// The pass itself: through the datastore for a kNN-LM variant (which takes no knockouts).
Trace runTrace(const std::shared_ptr<const LoadedModel>& model, const Request& request,
               const ModelInput& input, const CaptureRequest& capture,
               const variants::Intervention& intervention, ForwardResult& result) {
    if (!request.variant.knn)
        return model->model->forwardCached(*model->passCache, input, capture, request.variant,
                                           intervention, request.control);
    if (!request.knockouts.empty())
        throw variants::VariantError(
            "head knockouts and residual edits do not combine with kNN-LM: clear them first");
    result.knnStore = request.knnCache->storeFor(model, request.variant);
    return variants::forwardKnn(*model->model, input, capture, request.variant,
                                result.knnStore->datastore);
}

// A long pass's trace holds each layer's queries and keys: the views' statistics are computed
// from them here, on the worker thread, and maps later, when a view asks (StreamedAttention).
void keepStreamed(const LoadedModel& model, const Trace& trace, ForwardResult& result) {
    std::vector<analysis::AtlasInput> layers;
    for (const LayerTrace& layer : trace.layers)
        layers.push_back(analysis::atlasInputOf(layer, model.model->spec(), trace.valid));
    auto streamed = std::make_shared<const StreamedAttention>(std::move(layers), trace.valid);
    const analysis::StreamedStatistics statistics =
        analysis::streamedStatistics(streamed->inputs(), trace.valid, std::nullopt);
    result.stats = violinStats(statistics.entropy, statistics.adjacentJsd, trace.valid);
    result.streamed = std::move(streamed);
}

CaptureRequest keepingQueriesKeys(CaptureRequest capture) {
    capture.probabilities = false;
    capture.queriesKeys = true;
    return capture;
}

// The pass with queries and keys in place of maps when `streamed`; a layer loop the atlas cannot
// rebuild attention for (refused before the pass runs) keeps full capture instead, planned again
// with its maps (the capture limit and the plan refuse a text too long for them). Empty when
// that plan does not fit (the result's error says so).
std::optional<Trace> runCapturing(const std::shared_ptr<const LoadedModel>& model,
                                  const Request& request, const ModelInput& input,
                                  const CaptureRequest& capture, bool& streamed,
                                  const variants::Intervention& intervention,
                                  ForwardResult& result) {
    if (streamed) try {
            return runTrace(model, request, input, keepingQueriesKeys(capture), intervention,
                            result);
        } catch (const ModelError&) {
            streamed = false;
            result.memoryPlan.clear();
            if (!passFits(*model, request, int64_t(input.ids.size()), capture, result))
                return std::nullopt;
        }
    return runTrace(model, request, input, capture, intervention, result);
}

// Why not for a streamed pass: the report keeps every head's map, which a long text does not.
void reportSinks(const LoadedModel& model, const Request& request, const ModelInput& input,
                 bool streamed, ForwardResult& result) {
    if (streamed) {
        result.sinksNote = QStringLiteral("Sinks need every head's whole map, which a text this "
                                          "long does not keep: shorten the text.");
        return;
    }
    try {
        result.sinks = std::make_shared<const analysis::SinkReport>(analysis::sinkReport(
            *model.model, input, request.variant, kSinkViewTop, request.control));
    } catch (const PassCancelled&) {
        throw; // a newer request stops the whole pass
    } catch (const std::exception& refused) {
        result.sinksNote = QString::fromUtf8(refused.what()).section('\n', 0, 0);
    }
}

// Why not fatal: an SAE that does not fit the model leaves every other view as it was.
void readFeatures(const LoadedModel& model, const Request& request, const ModelInput& input,
                  const variants::Intervention& intervention, ForwardResult& result) {
    if (!request.sae) {
        result.featuresNote = noSaeNote();
        return;
    }
    try {
        result.features = std::make_shared<const FeatureAnalysis>(analyseFeatures(
            model, input, request.variant, intervention, request.sae, request.control));
    } catch (const PassCancelled&) {
        throw;
    } catch (const std::exception& refused) {
        result.featuresNote =
            QStringLiteral("The SAE %1 does not fit this model: %2")
                .arg(request.sae->name(), QString::fromUtf8(refused.what()).section('\n', 0, 0));
    }
}

void keepInternals(Trace& trace, ForwardResult& result) {
    result.internals = std::move(trace.internals);
    for (LayerTrace& layer : trace.layers)
        result.layerInternals.push_back(std::move(layer.internals));
}

std::shared_ptr<ForwardResult> runPass(const std::shared_ptr<const LoadedModel>& model,
                                       const Request& request) {
    auto result = std::make_shared<ForwardResult>();
    result->serial = request.serial;
    result->text = request.text;
    result->variant = request.variant;
    result->knockouts = request.knockouts;
    result->model = model;
    try {
        PreparedText prepared = prepareText(model->tokenizer.get(), request.text);
        if (prepared.input.ids.empty()) return result;
        CaptureRequest capture;
        capture.internals = true;
        const bool knocksOut = !request.knockouts.empty();
        const bool output = request.extras.outputs && model->model->hasLmHead();
        capture.hiddenStates = output;
        capture.logits = output || (knocksOut && hasLanguageModelHead(*model->model));
        const auto tokens = int64_t(prepared.input.ids.size());
        bool streamed = streamsAttention(model->model->spec(), request.variant, tokens);
        if (!passFits(*model, request, tokens, streamed ? keepingQueriesKeys(capture) : capture,
                      *result))
            return result;
        const variants::Intervention intervention = interventionFor(*model, request, tokens);
        std::optional<Trace> captured =
            runCapturing(model, request, prepared.input, capture, streamed, intervention, *result);
        if (!captured) return result;
        Trace& trace = *captured;
        if (request.extras.outputs)
            result->output = std::make_shared<const OutputAnalysis>(
                analyseOutput(*model, prepared.input, trace, request.variant));
        if (knocksOut) compareOutputs(*model, request, prepared.input, trace, *result);
        if (request.extras.queryKey)
            result->queryKey = std::make_shared<const QueryKeyAnalysis>(analyseQueriesKeys(
                *model, prepared.input, request.variant, intervention, prepared.kinds));
        if (request.extras.sinks) reportSinks(*model, request, prepared.input, streamed, *result);
        if (request.extras.features)
            readFeatures(*model, request, prepared.input, intervention, *result);
        // Why the cancel check between layer pairs: a real-size model's composition takes
        // minutes, and a newer request must not wait for it.
        if (request.extras.circuits)
            result->circuits =
                model->circuits->scores(model->folder, &result->circuitsNote, [&](int, int) {
                    if (request.control.cancelled && request.control.cancelled())
                        throw PassCancelled();
                });
        // Why no statistics for a dense pass: its violins wait for their view (stats.violins).
        if (streamed)
            keepStreamed(*model, trace, *result);
        else
            result->attention = trace.stackedProbabilities();
        result->valid = trace.valid;
        result->forwardMs = trace.forwardMs;
        keepInternals(trace, *result);
        // Why not for a streamed pass: the sparsity view, its only reader, needs every map.
        if (request.extras.vanillaPass && !request.variant.isVanilla() && !streamed)
            result->vanillaAttention =
                model->model
                    ->forwardCached(*model->passCache, prepared.input, {}, {}, {}, request.control)
                    .stackedProbabilities();
        result->tokens = prepared.labels;
        result->ids = prepared.input.ids;
    } catch (const PassCancelled& cancelled) {
        *result = ForwardResult{};
        result->serial = request.serial;
        result->text = request.text;
        result->error = QString::fromUtf8(cancelled.what());
        result->cancelled = true;
    } catch (const std::exception& error) {
        *result = ForwardResult{};
        result->serial = request.serial;
        result->text = request.text;
        result->error = QString::fromUtf8(error.what()).section('\n', 0, 0);
    }
    return result;
}
} // namespace

MemoryPlan planPass(const LoadedModel& model, int64_t tokens, const CaptureRequest& capture) {
    const bool host = model.backend->kind() == BackendKind::Cpu;
    MemoryPlan plan;
    plan.weights = model.weights;
    plan.load = loadBytes(plan.weights, host);
    plan.tokens = tokens;
    plan.forward = estimateForward(model.model->spec(), tokens, capture, host);
    if (const auto free = availableMemoryBytes()) plan.available = *free + plan.load;
    return plan;
}

std::shared_ptr<ForwardResult> runForwardPass(const std::shared_ptr<const LoadedModel>& model,
                                              const QString& text,
                                              const variants::VariantSpec& variant,
                                              const PassRequest& request) {
    Request pass{request};
    pass.text = text;
    pass.variant = variant;
    if (!pass.knnCache) pass.knnCache = std::make_shared<KnnStoreCache>();
    return runPass(model, pass);
}

ForwardRunner::ForwardRunner(QObject* parent)
    : QObject(parent)
    , watcher_(new QFutureWatcher<std::shared_ptr<ForwardResult>>(this)) {
    debounce_.setSingleShot(true);
    debounce_.setInterval(kDebounceMs);
    connect(&debounce_, &QTimer::timeout, this, &ForwardRunner::launch);
    connect(watcher_, &QFutureWatcherBase::finished, this, &ForwardRunner::collect);
}

ForwardRunner::~ForwardRunner() {
    watcher_->waitForFinished();
}

void ForwardRunner::setModel(std::shared_ptr<const LoadedModel> model) {
    model_ = std::move(model);
}

bool ForwardRunner::busy() const {
    return watcher_->isRunning();
}

void ForwardRunner::request(const QString& text) {
    text_ = text;
    newest_->store(++requested_);
}

void ForwardRunner::schedule(const QString& text) {
    request(text);
    debounce_.start();
}

void ForwardRunner::runNow(const QString& text) {
    request(text);
    debounce_.stop();
    launch();
}

void ForwardRunner::cancel() {
    request(text_);
    launched_ = requested_; // nothing is pending either
    debounce_.stop();
    if (busy()) Q_EMIT cancelled();
}

void ForwardRunner::setVariant(const variants::VariantSpec& variant) {
    variant_ = variant;
    runNow(text_);
}

void ForwardRunner::setKnockouts(const HeadKnockouts& knockouts) {
    knockouts_ = knockouts;
    runNow(text_);
}

void ForwardRunner::setSae(std::shared_ptr<const AttachedSae> sae) {
    sae_ = std::move(sae);
    if (extras_.features) runNow(text_);
}

void ForwardRunner::setExtras(const PassExtras& extras) {
    const bool newlyWanted =
        (extras.vanillaPass && !extras_.vanillaPass && !variant_.isVanilla()) ||
        (extras.outputs && !extras_.outputs) || (extras.queryKey && !extras_.queryKey) ||
        (extras.sinks && !extras_.sinks) || (extras.features && !extras_.features) ||
        (extras.circuits && !extras_.circuits);
    extras_ = extras;
    if (newlyWanted) runNow(text_);
}

void ForwardRunner::setPaused(bool paused) {
    paused_ = paused;
    if (!paused) launch();
}

void ForwardRunner::waitForIdle() {
    watcher_->waitForFinished();
}

void ForwardRunner::launch() {
    // Why not start now when busy: collect() launches the newest request when the pass ends.
    if (!model_ || paused_ || busy() || launched_ == requested_) return;
    launched_ = requested_;
    Request request;
    request.extras = extras_;
    request.knockouts = knockouts_;
    request.sae = sae_;
    request.knnCache = knnCache_;
    request.text = text_;
    request.variant = variant_;
    request.serial = launched_;
    request.runner = this;
    // Why between layers: a newer request (or cancel) stops this pass instead of queueing behind
    // it.
    request.control.cancelled = [newest = newest_, serial = launched_] {
        return *newest != serial;
    };
    request.control.progress = [runner = QPointer<ForwardRunner>(this)](int done, int total) {
        QMetaObject::invokeMethod(
            runner,
            [runner, done, total] {
                if (runner) Q_EMIT runner->progress(done, total);
            },
            Qt::QueuedConnection);
    };
    watcher_->setFuture(QtConcurrent::run(runPass, model_, request));
    Q_EMIT busyChanged(true);
}

void ForwardRunner::collect() {
    const std::shared_ptr<ForwardResult> result = watcher_->result();
    Q_EMIT busyChanged(false);
    if (result->serial != requested_) {
        if (!debounce_.isActive()) launch();
        return;
    }
    if (result->refusedForMemory)
        Q_EMIT refusedForMemory(result->error);
    else if (!result->error.isEmpty())
        Q_EMIT failed(result->error);
    else
        Q_EMIT finished(result);
}
} // namespace headlight::app
