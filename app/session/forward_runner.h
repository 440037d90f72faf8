#pragma once
// Runs the forward pass for the text being typed, with the variant the panel selected, off the
// GUI thread. Text requests are debounced (a burst of keystrokes makes one pass); a variant
// toggle runs at once. One pass runs at a time (a backend is not re-entrant), and a result is
// delivered only if no newer request came in while it ran: the newest request always wins, a
// pass it supersedes stops after the layer it is in, and stale results are dropped. Passes reuse
// what the model's KvCache kept of earlier ones (a text's prefix, the layers before a toggle). The
// sparsity view also needs the vanilla pass of the same text; it is run only while that view asks
// for it.

#include "ablation_effect.h"
#include "analysis/attention_sinks.h"
#include "analysis/residual_edit_spec.h"
#include "attention_stats.h"
#include "feature_analysis.h"
#include "knn_store.h"
#include "model_session.h"
#include "output_analysis.h"
#include "query_key_analysis.h"
#include "streamed_pass.h"

#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlight::app {

// Heads to knock out in every pass (a scenario's `ablation`): replace ones take their output from
// `source`, a text of the same token length, mean-corpus ones from `corpusMeans`.
struct HeadKnockouts {
    std::vector<variants::HeadAblationSpec> heads;
    QString source;
    std::shared_ptr<const CorpusHeadMeans> corpusMeans;
    // Residual-stream edits in the same pass (SAE features, steering vectors), by file.
    std::vector<analysis::ResidualEditSpec> edits;
    bool empty() const { return heads.empty() && edits.empty(); }
    bool operator==(const HeadKnockouts&) const = default;
};

struct ForwardResult {
    quint64 serial = 0; // which request produced it
    QString text;
    QStringList tokens;       // [T] display labels
    std::vector<int32_t> ids; // [T] the token ids the pass ran
    Tensor attention;         // [L, H, T, T]; empty when the text has no tokens or is streamed
    // A long pass's queries and keys in place of `attention` (streamsAttention); else null
    std::shared_ptr<const StreamedAttention> streamed;
    analysis::TokenMask valid;               // [T]
    AttentionStats stats;                    // a dense pass's are computed when a view first asks
    variants::VariantSpec variant;           // what the pass ran with
    std::map<std::string, Tensor> internals; // pass-wide variant internals
    std::vector<std::map<std::string, Tensor>> layerInternals; // [L] per-layer internals
    Tensor vanillaAttention; // [L, H, T, T] of the vanilla pass; empty unless asked for
    // The logit lens and the variant's effect on the output; null unless asked for
    // (PassExtras::outputs)
    std::shared_ptr<const OutputAnalysis> output;
    // Every head's query-key embedding; null unless asked for (PassExtras::queryKey)
    std::shared_ptr<const QueryKeyAnalysis> queryKey;
    // Sinks and massive activations with their ablations, of the pass without knockouts; null
    // unless asked for (PassExtras::sinks), and then `sinksNote` says why when it is null
    std::shared_ptr<const analysis::SinkReport> sinks;
    QString sinksNote;
    // The attached SAE's features of the pass; null unless asked for (PassExtras::features) with
    // an SAE attached, and then `featuresNote` says why when it is null
    std::shared_ptr<const FeatureAnalysis> features;
    QString featuresNote;
    // The model's copying and composition scores, from its weights; null unless asked for
    // (PassExtras::circuits), and then `circuitsNote` says why when it is null
    std::shared_ptr<const analysis::CircuitScores> circuits;
    QString circuitsNote;
    HeadKnockouts knockouts; // the heads the pass knocked out
    // With knockouts: per position, the output against the same pass without them; empty when
    // the model has no tied LM head (outputNote says so).
    std::vector<PositionChange> outputChange;
    QString outputNote;
    std::shared_ptr<const LoadedModel> model; // the model that ran it
    std::shared_ptr<const KnnStore> knnStore; // the datastore of a kNN-LM pass, else null
    double forwardMs = 0.0;
    QString memoryPlan; // describePlan of a long pass (≥ kLongPassTokens tokens), else empty
    QString error;      // one line; the other fields are empty when set
    bool refusedForMemory = false; // the error is the plan of a pass that would not fit
    bool cancelled = false;        // the pass was stopped (PassControl); error says so

    int tokenCount() const { return int(tokens.size()); }
    int layerCount() const { return streamed ? streamed->layers() : int(attention.dim(0)); }
    int headCount() const { return streamed ? streamed->heads() : int(attention.dim(1)); }
};

// The memory plan of a pass of `tokens` tokens on a loaded model. The memory the weights already
// hold counts as available to it, so the plan fits when the pass itself fits what is free.
MemoryPlan planPass(const LoadedModel& model, int64_t tokens, const CaptureRequest& capture);

// The largest activations per layer the sinks view shows (and its zero-massive pass zeroes).
constexpr int kSinkViewTop = 4;

// What a pass computes beyond the attention maps and internals: each costs a second pass or a
// capture, and is made only while a view that reads it is shown (ViewRow::needs).
struct PassExtras {
    bool vanillaPass = false; // the vanilla model's maps too, when the variant is not vanilla
    bool outputs = false;     // the logit lens and the variant's effect on the output
    bool queryKey = false;    // every head's query-key embedding (QueryKeyAnalysis)
    bool sinks = false;       // sinks, massive activations and four ablated passes (SinkReport)
    bool features = false;    // the attached SAE's features and losses (FeatureAnalysis)
    bool circuits = false;    // the model's copying and composition scores (CircuitCache)
    bool operator==(const PassExtras&) const = default;
};

// How `runForwardPass` runs a pass beyond its model, text and variant.
struct PassRequest {
    PassExtras extras;
    HeadKnockouts knockouts;
    std::shared_ptr<const AttachedSae> sae; // what PassExtras::features reads; null for none
    PassControl control;                    // cancels between layers, reports progress
    // A kNN-LM variant's datastore (built there when it holds none that fits; a fresh cache when
    // null).
    std::shared_ptr<KnnStoreCache> knnCache;
};

// One pass as the runner makes it, on the calling thread: attention, statistics, internals and
// the request's extras (`headlight export` uses it). A refusal comes back as the result's
// `error`; a pass the control cancels, as an error with `cancelled` set.
std::shared_ptr<ForwardResult> runForwardPass(const std::shared_ptr<const LoadedModel>& model,
                                              const QString& text,
                                              const variants::VariantSpec& variant,
                                              const PassRequest& request = {});

class ForwardRunner : public QObject {
    Q_OBJECT
public:
    static constexpr int kDebounceMs = 250;
    // From this length on the window shows a pass's memory plan before it runs.
    static constexpr int kLongPassTokens = 512;

    explicit ForwardRunner(QObject* parent = nullptr);
    ~ForwardRunner() override;

    void setModel(std::shared_ptr<const LoadedModel> model);
    void schedule(const QString& text); // after kDebounceMs of quiet
    void runNow(const QString& text);
    void setVariant(const variants::VariantSpec& variant); // re-runs the current text at once
    const variants::VariantSpec& variant() const { return variant_; }
    // Heads knocked out in every pass from now on; re-runs the current text at once.
    void setKnockouts(const HeadKnockouts& knockouts);
    const HeadKnockouts& knockouts() const { return knockouts_; }
    // The SAE the Features view reads (null: none); re-runs the current text at once.
    void setSae(std::shared_ptr<const AttachedSae> sae);
    const std::shared_ptr<const AttachedSae>& sae() const { return sae_; }
    // What passes compute beyond the maps; newly wanted extras re-run the current text (the
    // vanilla pass only when the variant is not vanilla).
    void setExtras(const PassExtras& extras);
    // While paused nothing launches (the corpus uses the backend); resuming runs what is pending.
    void setPaused(bool paused);
    void waitForIdle();
    // Stops the pass in flight after its current layer and drops what is pending; emits
    // cancelled() when a pass was running.
    void cancel();
    bool busy() const;
    quint64 latestRequest() const { return requested_; }
    // The kNN-LM datastore the passes use (and the window's build action installs into).
    KnnStoreCache& knnCache() { return *knnCache_; }

Q_SIGNALS:
    void finished(std::shared_ptr<const ForwardResult> result);
    void failed(const QString& reason);
    // Before a long pass runs: its memory plan (describePlan), so that the wait is explained.
    void planned(const QString& plan);
    // A pass refused before it ran because its plan does not fit the memory available.
    void refusedForMemory(const QString& reason);
    void busyChanged(bool busy);
    // The pass in flight finished `done` of its `total` layers.
    void progress(int done, int total);
    void cancelled();

private:
    void launch();
    void collect();
    void request(const QString& text);

    QTimer debounce_;
    QFutureWatcher<std::shared_ptr<ForwardResult>>* watcher_;
    std::shared_ptr<const LoadedModel> model_;
    QString text_; // the newest request's text
    variants::VariantSpec variant_;
    HeadKnockouts knockouts_;
    std::shared_ptr<const AttachedSae> sae_;
    std::shared_ptr<KnnStoreCache> knnCache_ = std::make_shared<KnnStoreCache>();
    PassExtras extras_;
    bool paused_ = false;
    quint64 requested_ = 0; // serial of the newest request
    quint64 launched_ = 0;  // serial of the pass in flight or last run
    // requested_ as the pass in flight reads it between layers (from its worker thread).
    std::shared_ptr<std::atomic<quint64>> newest_ = std::make_shared<std::atomic<quint64>>(0);
};
} // namespace headlight::app
