#pragma once
// The Atlas view's pass, off the GUI thread: one forward pass that keeps only the chosen layer's
// queries and keys (CaptureRequest::queriesKeys, no T × T map), then the attention atlas
// (core/analysis/attention_atlas.h) built from them with progress. Like ForwardRunner, one pass
// runs at a time and the newest request wins: a newer request (or cancel()) stops the atlas
// being built at its next progress report, and a stale result is dropped. A pass of
// ForwardRunner::kLongPassTokens tokens or more tells its memory plan first, and one that would
// not fit, or that the model refuses (a text past a learned position table), fails with the
// reason. The pass runs the variant set (setVariant): a sparse mask's, LSH's or a linearized
// kernel's own weights are drawn (core/analysis/atlas_variant.h), and a variant the atlas cannot
// draw fails with the reason, never falling back to exact attention.

#include "analysis/attention_atlas.h"
#include "model_session.h"
#include "variants/variant_spec.h"

#include <QFutureWatcher>
#include <QObject>
#include <QStringList>
#include <atomic>
#include <memory>

namespace headlight::app {

struct AtlasResult {
    quint64 serial = 0;
    QString text;
    int layer = 0;
    int head = 0;       // AttentionAtlas::kAllHeads for the layer's mean
    int64_t tokens = 0; // also set when the pass was refused
    QStringList labels; // [T] display labels
    std::shared_ptr<const analysis::AttentionAtlas> atlas; // null after an error
    std::shared_ptr<const LoadedModel> model;
    double forwardMs = 0.0, atlasMs = 0.0;
    QString error;      // one line; empty on success
    bool cancelled = false;
};

// "no limit (rotary positions)" or "1,024 positions (learned table)": what limits the text.
QString positionLimitText(const LoadedModel& model);

class AtlasRunner : public QObject {
    Q_OBJECT
public:
    explicit AtlasRunner(QObject* parent = nullptr);
    ~AtlasRunner() override;

    void setModel(std::shared_ptr<const LoadedModel> model);
    // The variant the next requests run (default: none, the model as trained).
    void setVariant(const variants::VariantSpec& variant);
    const variants::VariantSpec& variant() const { return variant_; }
    // Draws `head` (or AttentionAtlas::kAllHeads) of `layer` for `text`; replaces any request.
    void request(const QString& text, int layer, int head);
    void cancel(); // stops the pass in flight at its next progress report; nothing pending
    // While held nothing launches (the window's other pass uses the backend); releasing runs
    // what is pending.
    void setHeld(bool held);
    bool busy() const;

Q_SIGNALS:
    void progress(double share); // of the atlas's pass over the map; 0 while the model runs
    void planned(const QString& plan);
    void finished(std::shared_ptr<const AtlasResult> result);
    void failed(const QString& reason, int64_t tokens);
    void busyChanged(bool busy);

private:
    void launch();
    void collect();

    QFutureWatcher<std::shared_ptr<AtlasResult>>* watcher_;
    std::shared_ptr<const LoadedModel> model_;
    QString text_;
    variants::VariantSpec variant_;
    int layer_ = 0, head_ = 0;
    bool held_ = false;
    quint64 requested_ = 0, launched_ = 0;
    // The newest serial, read by the pass in flight to notice it is stale.
    std::shared_ptr<std::atomic<quint64>> latest_ = std::make_shared<std::atomic<quint64>>(0);
};
} // namespace headlight::app
