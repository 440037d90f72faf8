#pragma once
// Runs the forward pass for the text being typed, with the variant the panel selected, off the
// GUI thread. Text requests are debounced (a burst of keystrokes makes one pass); a variant
// toggle runs at once. One pass runs at a time (a backend is not re-entrant), and a result is
// delivered only if no newer request came in while it ran: the newest request always wins and
// stale results are dropped. The sparsity view also needs the vanilla pass of the same text;
// it is run only while that view asks for it.

#include "ablation_effect.h"
#include "attention_stats.h"
#include "model_session.h"
#include "output_analysis.h"
#include "query_key_analysis.h"

#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace headlight::app {

// Heads to knock out in every pass (a scenario's `ablation`): replace ones take their output from
// `source`, a text of the same token length.
struct HeadKnockouts {
    std::vector<variants::HeadAblationSpec> heads;
    QString source;
    bool operator==(const HeadKnockouts&) const = default;
};

struct ForwardResult {
    quint64 serial = 0; // which request produced it
    QString text;
    QStringList tokens;        // [T] display labels
    Tensor attention;          // [L, H, T, T]; empty when the text has no tokens
    analysis::TokenMask valid; // [T]
    AttentionStats stats;
    variants::VariantSpec variant;                             // what the pass ran with
    std::map<std::string, Tensor> internals;                   // pass-wide variant internals
    std::vector<std::map<std::string, Tensor>> layerInternals; // [L] per-layer internals
    Tensor vanillaAttention; // [L, H, T, T] of the vanilla pass; empty unless asked for
    // The logit lens and the variant's effect on the output; null unless asked for (withOutput)
    std::shared_ptr<const OutputAnalysis> output;
    // Every head's query-key embedding; null unless asked for (withQueryKey)
    std::shared_ptr<const QueryKeyAnalysis> queryKey;
    HeadKnockouts knockouts; // the heads the pass knocked out
    // With knockouts: per position, the output against the same pass without them; empty when
    // the model has no tied LM head (outputNote says so).
    std::vector<PositionChange> outputChange;
    QString outputNote;
    std::shared_ptr<const LoadedModel> model; // the model that ran it
    double forwardMs = 0.0;
    QString memoryPlan; // describePlan of a long pass (≥ kLongPassTokens tokens), else empty
    QString error; // one line; the other fields are empty when set
    bool refusedForMemory = false; // the error is the plan of a pass that would not fit

    int tokenCount() const { return int(tokens.size()); }
};

// One pass as the runner makes it, on the calling thread: attention, statistics, internals and,
// when asked and the variant is not vanilla, the vanilla pass too (`headlight export` uses it);
// with `withOutput`, the logit lens and the variant's effect on the output (OutputAnalysis);
// with `withQueryKey`, every head's query-key embedding (QueryKeyAnalysis).
// A refusal comes back as the result's `error`.
std::shared_ptr<ForwardResult>
runForwardPass(const std::shared_ptr<const LoadedModel>& model, const QString& text,
               const variants::VariantSpec& variant, bool withVanilla, bool withOutput = false,
               const HeadKnockouts& knockouts = {}, bool withQueryKey = false);

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
    // Whether passes also run the vanilla model (when the variant is not vanilla); turning it on
    // re-runs the current text.
    void setVanillaWanted(bool wanted);
    // Whether passes also compute the logit lens and the variant's effect on the output (the
    // LM-head views); turning it on re-runs the current text.
    void setOutputWanted(bool wanted);
    // Whether passes also compute the query-key embedding of every head (a second pass that keeps
    // queries and keys); turning it on re-runs the current text.
    void setQueryKeyWanted(bool wanted);
    // While paused nothing launches (the corpus uses the backend); resuming runs what is pending.
    void setPaused(bool paused);
    void waitForIdle();
    bool busy() const;
    quint64 latestRequest() const { return requested_; }

Q_SIGNALS:
    void finished(std::shared_ptr<const ForwardResult> result);
    void failed(const QString& reason);
    // Before a long pass runs: its memory plan (describePlan), so that the wait is explained.
    void planned(const QString& plan);
    // A pass refused before it ran because its plan does not fit the memory available.
    void refusedForMemory(const QString& reason);
    void busyChanged(bool busy);

private:
    void launch();
    void collect();

    QTimer debounce_;
    QFutureWatcher<std::shared_ptr<ForwardResult>>* watcher_;
    std::shared_ptr<const LoadedModel> model_;
    QString text_; // the newest request's text
    variants::VariantSpec variant_;
    HeadKnockouts knockouts_;
    bool vanillaWanted_ = false;
    bool outputWanted_ = false;
    bool queryKeyWanted_ = false;
    bool paused_ = false;
    quint64 requested_ = 0; // serial of the newest request
    quint64 launched_ = 0;  // serial of the pass in flight or last run
};
} // namespace headlight::app
