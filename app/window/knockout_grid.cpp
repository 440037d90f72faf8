#include "knockout_grid.h"

#include "corpus_means_runner.h"
#include "knockout_edit.h"
#include "workspace.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>

namespace headlight::app {
namespace {

constexpr int kCell = 22, kGap = 3, kLabel = 26;

auto findHead(std::vector<variants::HeadAblationSpec>& heads, int layer, int head) {
    return std::find_if(heads.begin(), heads.end(), [&](const variants::HeadAblationSpec& s) {
        return s.layer == layer && s.head == head;
    });
}

// What a knocked-out head's cell shows: its mode.
QString modeMark(variants::AblationMode mode) {
    switch (mode) {
    case variants::AblationMode::Zero:
        break;
    case variants::AblationMode::Mean:
        return QStringLiteral("μ");
    case variants::AblationMode::CorpusMean:
        return QStringLiteral("μc");
    case variants::AblationMode::Replace:
        return QStringLiteral("R");
    }
    return QStringLiteral("0");
}

QString tokenText(const LoadedModel& model, int id) {
    const std::string text = model.tokenizer ? model.tokenizer->tokenString(id) : std::string();
    return text.empty() ? QStringLiteral("#%1").arg(id)
                        : QStringLiteral("“%1”").arg(QString::fromStdString(text));
}
} // namespace

HeadToggles::HeadToggles(QWidget* parent)
    : QWidget(parent) {
    setFocusPolicy(Qt::StrongFocus);
    setObjectName(QStringLiteral("headToggles"));
    setAccessibleName(tr("Head knockouts"));
    setToolTip(tr("Click a head, or move with the arrow keys and press Space, to knock it out"));
}

void HeadToggles::setShape(int layers, int heads) {
    layers_ = layers;
    heads_ = heads;
    focusLayer_ = std::clamp(focusLayer_, 0, std::max(0, layers - 1));
    focusHead_ = std::clamp(focusHead_, 0, std::max(0, heads - 1));
    updateGeometry();
    update();
}

void HeadToggles::setKnocked(const std::vector<variants::HeadAblationSpec>& heads) {
    knocked_ = heads;
    update();
}

QSize HeadToggles::sizeHint() const {
    return {kLabel + heads_ * (kCell + kGap), kLabel / 2 + layers_ * (kCell + kGap)};
}

QRect HeadToggles::cellRect(int layer, int head) const {
    return {kLabel + head * (kCell + kGap), kLabel / 2 + layer * (kCell + kGap), kCell, kCell};
}

void HeadToggles::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QPalette& pal = palette();
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    p.setFont(small);
    for (int h = 0; h < heads_; ++h)
        p.drawText(QRect(cellRect(0, h).x(), 0, kCell, kLabel / 2), Qt::AlignCenter,
                   QString::number(h));
    for (int l = 0; l < layers_; ++l) {
        p.setPen(pal.color(QPalette::WindowText));
        p.drawText(QRect(0, cellRect(l, 0).y(), kLabel - 4, kCell),
                   Qt::AlignRight | Qt::AlignVCenter, QString::number(l));
        for (int h = 0; h < heads_; ++h) {
            const QRect cell = cellRect(l, h);
            auto knocked = std::find_if(knocked_.begin(), knocked_.end(),
                                        [&](const auto& s) { return s.layer == l && s.head == h; });
            const bool out = knocked != knocked_.end();
            p.setPen(QPen(pal.color(QPalette::Mid), 1));
            p.setBrush(out ? QColor(0xc0, 0x39, 0x2b) : pal.color(QPalette::Base));
            p.drawRoundedRect(cell, 3, 3);
            if (out) {
                p.setPen(Qt::white);
                p.drawText(cell, Qt::AlignCenter, modeMark(knocked->mode));
            }
            if (hasFocus() && l == focusLayer_ && h == focusHead_) {
                p.setPen(QPen(pal.color(QPalette::Highlight), 2));
                p.setBrush(Qt::NoBrush);
                p.drawRoundedRect(cell.adjusted(-2, -2, 2, 2), 4, 4);
            }
        }
    }
}

void HeadToggles::mousePressEvent(QMouseEvent* event) {
    for (int l = 0; l < layers_; ++l)
        for (int h = 0; h < heads_; ++h)
            if (cellRect(l, h).contains(event->position().toPoint())) {
                focusLayer_ = l;
                focusHead_ = h;
                Q_EMIT toggled(l, h);
                return;
            }
}

void HeadToggles::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Left:
        focusHead_ = std::max(0, focusHead_ - 1);
        break;
    case Qt::Key_Right:
        focusHead_ = std::min(heads_ - 1, focusHead_ + 1);
        break;
    case Qt::Key_Up:
        focusLayer_ = std::max(0, focusLayer_ - 1);
        break;
    case Qt::Key_Down:
        focusLayer_ = std::min(layers_ - 1, focusLayer_ + 1);
        break;
    case Qt::Key_Space:
    case Qt::Key_Return:
        if (layers_ > 0 && heads_ > 0) Q_EMIT toggled(focusLayer_, focusHead_);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    update();
}

KnockoutGrid::KnockoutGrid(Workspace* workspace, QUndoStack* undo, QWidget* parent)
    : QWidget(parent)
    , workspace_(workspace)
    , undo_(undo)
    , toggles_(new HeadToggles)
    , mode_(new QComboBox)
    , modeNote_(new QLabel)
    , clear_(new QPushButton(tr("Clear")))
    , readout_(new QLabel)
    , meansRunner_(new CorpusMeansRunner(workspace, this)) {
    setObjectName(QStringLiteral("knockoutGrid"));
    mode_->addItem(tr("zero"), int(variants::AblationMode::Zero));
    mode_->addItem(tr("mean over the text"), int(variants::AblationMode::Mean));
    mode_->addItem(tr("mean over a corpus…"), int(variants::AblationMode::CorpusMean));
    mode_->addItem(tr("replace from a text…"), int(variants::AblationMode::Replace));
    mode_->setToolTip(tr("What a knocked-out head outputs: nothing, its mean over the text, its "
                         "mean over every token of a corpus file (one text per line), or its "
                         "output on another text of the same length"));
    modeNote_->setWordWrap(true);
    modeNote_->setTextFormat(Qt::PlainText); // a text or file name, never markup
    modeNote_->setObjectName(QStringLiteral("knockoutModeNote"));
    modeNote_->hide();
    readout_->setWordWrap(true);
    readout_->setObjectName(QStringLiteral("knockoutReadout"));
    auto* title = new QLabel(tr("<b>Head knockouts</b>"));
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Mode")));
    row->addWidget(mode_, 1);
    row->addWidget(clear_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(title);
    layout->addLayout(row);
    layout->addWidget(modeNote_);
    layout->addWidget(toggles_, 0, Qt::AlignLeft);
    layout->addWidget(readout_);
    layout->addStretch(1);
    connect(toggles_, &HeadToggles::toggled, this, &KnockoutGrid::toggle);
    connect(clear_, &QPushButton::clicked, this, [this] {
        if (workspace_->knockouts().heads.empty()) return;
        undo_->push(
            new KnockoutEdit(workspace_, workspace_->knockouts(), {}, tr("clear knockouts")));
    });
    connect(mode_, &QComboBox::activated, this, &KnockoutGrid::onModeActivated);
    connect(meansRunner_, &CorpusMeansRunner::finished, this, &KnockoutGrid::onCorpusMeans);
    connect(meansRunner_, &CorpusMeansRunner::failed, this, [this](const QString& reason) {
        revertMode();
        QMessageBox::warning(this, tr("Corpus means"),
                             tr("Headlight cannot average the corpus: %1").arg(reason));
    });
    connect(workspace_, &Workspace::modelChanged, this, [this](const ModelSpec& spec) {
        toggles_->setShape(spec.layers, spec.heads);
        corpusMeans_.reset(); // another model's heads
        revertMode();
    });
    connect(workspace_, &Workspace::knockoutsChanged, this, &KnockoutGrid::showKnockouts);
    connect(workspace_, &Workspace::refreshed, this, &KnockoutGrid::updateReadout);
    updateReadout();
}

void KnockoutGrid::toggle(int layer, int head) {
    const HeadKnockouts before = workspace_->knockouts();
    HeadKnockouts after = before;
    const auto found = findHead(after.heads, layer, head);
    const bool knockingOut = found == after.heads.end();
    if (knockingOut) {
        after.heads.push_back({layer, head, mode()});
        if (mode() == variants::AblationMode::CorpusMean) after.corpusMeans = corpusMeans_;
        if (mode() == variants::AblationMode::Replace) after.source = replaceSource_;
    } else
        after.heads.erase(found);
    const QString text =
        (knockingOut ? tr("knock out head %1.%2") : tr("restore head %1.%2")).arg(layer).arg(head);
    undo_->push(new KnockoutEdit(workspace_, before, after, text));
}

variants::AblationMode KnockoutGrid::mode() const {
    return variants::AblationMode(mode_->currentData().toInt());
}

// The corpus and replace modes ask for what they need first; cancelling keeps the mode before.
void KnockoutGrid::onModeActivated(int) {
    if (mode() == variants::AblationMode::CorpusMean) {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Corpus for mean ablation"), QString(),
                                         tr("Text, one per line (*.txt);;All (*)"));
        QString why;
        if (path.isEmpty()) {
            revertMode();
        } else if (!useCorpus(path, &why)) {
            revertMode();
            QMessageBox::warning(this, tr("Corpus means"), why);
        }
        return;
    }
    if (mode() == variants::AblationMode::Replace) {
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, tr("Replace from a text"),
            tr("The text whose head outputs a knocked-out head takes (as many tokens as the "
               "text):"),
            QLineEdit::Normal, replaceSource_.isEmpty() ? workspace_->text() : replaceSource_, &ok);
        if (!ok || text.isEmpty()) return revertMode();
        setReplaceSource(text);
        return;
    }
    settledMode_ = mode_->currentIndex();
    updateModeNote();
}

bool KnockoutGrid::useCorpus(const QString& path, QString* why) {
    return meansRunner_->start(path, why);
}

void KnockoutGrid::setReplaceSource(const QString& text) {
    replaceSource_ = text;
    settledMode_ = mode_->currentIndex();
    updateModeNote();
}

void KnockoutGrid::onCorpusMeans(std::shared_ptr<const CorpusHeadMeans> means) {
    if (!means) return revertMode(); // cancelled
    corpusMeans_ = std::move(means);
    mode_->setCurrentIndex(mode_->findData(int(variants::AblationMode::CorpusMean)));
    settledMode_ = mode_->currentIndex();
    updateModeNote();
}

void KnockoutGrid::revertMode() {
    const auto settled = variants::AblationMode(mode_->itemData(settledMode_).toInt());
    const bool usable = (settled != variants::AblationMode::CorpusMean || corpusMeans_) &&
                        (settled != variants::AblationMode::Replace || !replaceSource_.isEmpty());
    mode_->setCurrentIndex(usable ? settledMode_ : 0);
    settledMode_ = mode_->currentIndex();
    updateModeNote();
}

void KnockoutGrid::updateModeNote() {
    QString note;
    if (mode() == variants::AblationMode::CorpusMean && corpusMeans_)
        note = tr("Means over %1: %2 texts, %3 tokens")
                   .arg(corpusMeans_->corpus)
                   .arg(corpusMeans_->texts)
                   .arg(corpusMeans_->positions);
    if (mode() == variants::AblationMode::Replace)
        note = tr("Outputs from “%1”").arg(replaceSource_);
    modeNote_->setText(note);
    modeNote_->setVisible(!note.isEmpty());
}

void KnockoutGrid::showKnockouts(const HeadKnockouts& knockouts) {
    toggles_->setKnocked(knockouts.heads);
    clear_->setEnabled(!knockouts.heads.empty());
    updateReadout();
}

// The output change at the selected token of the pass on screen, once it ran with the
// knockouts the grid shows.
void KnockoutGrid::updateReadout() {
    const ForwardResult* result = workspace_->result();
    const HeadKnockouts& knockouts = workspace_->knockouts();
    if (knockouts.heads.empty()) {
        readout_->setText(tr("Click heads to knock them out; the output change shows here."));
        return;
    }
    if (!result || result->knockouts != knockouts) {
        readout_->setText(tr("Running…"));
        return;
    }
    if (result->outputChange.empty()) {
        readout_->setText(result->outputNote.isEmpty() ? tr("No tokens.") : result->outputNote);
        return;
    }
    const int query = workspace_->state().query;
    const int position = query >= 0 ? query : int(result->outputChange.size()) - 1;
    const PositionChange& c = result->outputChange[std::size_t(position)];
    const OutputChangeSummary all = summarizeOutputChange(result->outputChange);
    readout_->setText(
        tr("At token %1 “%2”: KL(p_clean ‖ p_ablated) = %3 nats<br>top-1 %4 (%5) → %6 (%7)%8"
           "<br>All tokens: mean KL %9, top-1 changed at %10 of %11")
            .arg(position)
            .arg(result->tokens.value(position).toHtmlEscaped())
            .arg(c.kl, 0, 'g', 4)
            .arg(tokenText(*result->model, c.cleanTop).toHtmlEscaped())
            .arg(c.cleanTopProbability, 0, 'f', 3)
            .arg(tokenText(*result->model, c.ablatedTop).toHtmlEscaped())
            .arg(c.ablatedTopProbability, 0, 'f', 3)
            .arg(c.flipped() ? tr(" <b>changed</b>") : QString())
            .arg(all.meanKl, 0, 'g', 4)
            .arg(all.flipped)
            .arg(result->outputChange.size()));
}
} // namespace headlight::app
