#pragma once
// The knockout grid of the variant dock: one toggle per head, layers as rows and heads as
// columns. Clicking a head (or Space on the focused one; arrows move the focus) knocks it out as
// the mode box says (zero; its mean over the text; its mean over a corpus, whose head means are
// computed once per model and corpus file with progress and cancel; or its output on another
// text of the same length), and the pass re-runs at once; under the grid, what that did
// to the output at the selected token (the last one when none is selected): KL(p_clean ‖
// p_ablated) and the top-1 prediction before and after. Each toggle and "Clear" is a step on
// the dock's undo stack (Ctrl+Z / Ctrl+Shift+Z), with the variant edits.

#include "forward_runner.h"

#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;
class QPushButton;
class QUndoStack;

namespace headlight::app {

class CorpusMeansRunner;
class Workspace;

class HeadToggles : public QWidget {
    Q_OBJECT
public:
    explicit HeadToggles(QWidget* parent = nullptr);
    void setShape(int layers, int heads);
    void setKnocked(const std::vector<variants::HeadAblationSpec>& heads);
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }
    std::pair<int, int> focusedHead() const { return {focusLayer_, focusHead_}; }
    QRect cellRect(int layer, int head) const;

Q_SIGNALS:
    void toggled(int layer, int head);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    int layers_ = 0, heads_ = 0;
    int focusLayer_ = 0, focusHead_ = 0;
    std::vector<variants::HeadAblationSpec> knocked_;
};

class KnockoutGrid : public QWidget {
    Q_OBJECT
public:
    KnockoutGrid(Workspace* workspace, QUndoStack* undo, QWidget* parent = nullptr);

    HeadToggles* toggles() const { return toggles_; }
    QLabel* readout() const { return readout_; }
    QComboBox* modeBox() const { return mode_; }
    QLabel* modeNote() const { return modeNote_; } // the corpus or text the mode takes
    CorpusMeansRunner* corpusMeansRunner() const { return meansRunner_; }
    const std::shared_ptr<const CorpusHeadMeans>& corpusMeans() const { return corpusMeans_; }
    // Knocks `head` of `layer` out (with the mode box's mode) or back in, as one undo step.
    void toggle(int layer, int head);
    // Starts computing the head means of the corpus file `path` (what "mean over a corpus…"
    // does after its file dialog); false with `why` when it cannot start.
    bool useCorpus(const QString& path, QString* why = nullptr);
    // The text replace knockouts take their heads' outputs from.
    void setReplaceSource(const QString& text);

private:
    void showKnockouts(const HeadKnockouts& knockouts);
    void updateReadout();
    void onModeActivated(int index);
    void onCorpusMeans(std::shared_ptr<const CorpusHeadMeans> means);
    void revertMode(); // back to the last mode that has what it needs
    void updateModeNote();
    variants::AblationMode mode() const;

    Workspace* workspace_;
    QUndoStack* undo_;
    HeadToggles* toggles_;
    QComboBox* mode_;
    QLabel* modeNote_;
    QPushButton* clear_;
    QLabel* readout_;
    CorpusMeansRunner* meansRunner_;
    std::shared_ptr<const CorpusHeadMeans> corpusMeans_; // of the current model
    QString replaceSource_;
    int settledMode_ = 0; // the mode box's index before a choice that may be cancelled
};
} // namespace headlight::app
