#include "variant_dock.h"

#include "feature_editor.h"
#include "knockout_grid.h"
#include "steering_editor.h"
#include "variant_panel.h"
#include "workspace.h"

#include <QAction>
#include <QFileDialog>
#include <QJsonDocument>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QUndoStack>
#include <QVBoxLayout>

namespace headlight::app {
namespace {

QByteArray specText(const QJsonObject& spec) {
    return QJsonDocument(spec).toJson(QJsonDocument::Indented);
}

// One variant edit. Successive nudges of the same parameter merge into one step, so undo goes
// back to the value before the spin box was touched, not one arrow click at a time.
class VariantEdit : public QUndoCommand {
public:
    VariantEdit(VariantDock* dock, QJsonObject before, QJsonObject after, int mergeKey)
        : dock_(dock)
        , before_(std::move(before))
        , after_(std::move(after))
        , mergeKey_(mergeKey) {
        setText(QObject::tr("variant edit"));
    }
    void undo() override { dock_->apply(before_); }
    void redo() override { dock_->apply(after_); }
    int id() const override { return mergeKey_; }
    bool mergeWith(const QUndoCommand* other) override {
        after_ = static_cast<const VariantEdit*>(other)->after_;
        return true;
    }

private:
    VariantDock* dock_;
    QJsonObject before_, after_;
    int mergeKey_;
};
} // namespace

VariantDock::VariantDock(Workspace* workspace, QWidget* parent)
    : QDockWidget(tr("Variant"), parent)
    , workspace_(workspace)
    , panel_(new VariantPanel)
    , json_(new QPlainTextEdit)
    , undo_(new QUndoStack(this)) {
    setObjectName(QStringLiteral("variantDock"));
    auto* scroll = new QScrollArea;
    scroll->setWidget(panel_);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    json_->setReadOnly(true);
    json_->setObjectName(QStringLiteral("variantJson"));
    json_->setToolTip(tr("The variant spec as JSON: File ▸ Save variant spec… writes it for "
                         "headlight inspect --variant"));
    json_->setFont(QFont(QStringLiteral("DejaVu Sans Mono"), 10));
    knockouts_ = new KnockoutGrid(workspace, undo_);
    auto* knockoutScroll = new QScrollArea;
    knockoutScroll->setWidget(knockouts_);
    knockoutScroll->setWidgetResizable(true);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(scroll);
    split->addWidget(knockoutScroll);
    features_ = new FeatureEditor(workspace, undo_);
    steering_ = new SteeringEditor(workspace, undo_);
    // The residual-stream edits share a pane: the steering vector first, since it works on any
    // model, where the SAE editor waits for an SAE.
    auto* edits = new QWidget;
    auto* editsLayout = new QVBoxLayout(edits);
    editsLayout->setContentsMargins(0, 0, 0, 0);
    editsLayout->addWidget(steering_);
    editsLayout->addWidget(features_);
    editsLayout->addStretch();
    // Why in a scroll area, as the knockouts: a short dock squeezed its wrapped labels into
    // each other.
    auto* featureScroll = new QScrollArea;
    featureScroll->setWidget(edits);
    featureScroll->setWidgetResizable(true);
    featureScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    split->addWidget(featureScroll);
    split->addWidget(json_);
    split->setCollapsible(1, false);
    split->setSizes({360, 200, 230, 50});
    setWidget(split);
    apply(QJsonObject{});

    undoAction_ = undo_->createUndoAction(this, tr("&Undo"));
    undoAction_->setShortcut(QKeySequence::Undo);
    redoAction_ = undo_->createRedoAction(this, tr("&Redo"));
    redoAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
    save_ = new QAction(tr("Save &variant spec…"), this);
    save_->setStatusTip(tr("Write the variant spec as JSON for headlight inspect --variant"));
    connect(save_, &QAction::triggered, this, &VariantDock::chooseSaveFile);
    connect(panel_, &VariantPanel::edited, this, &VariantDock::onEdited);
    connect(workspace_, &Workspace::modelChanged, this,
            [this](const ModelSpec& spec) { panel_->setModelSpec(spec); });
}

void VariantDock::onEdited(const QJsonObject& next, int mergeKey) {
    undo_->push(new VariantEdit(this, panel_->spec(), next, mergeKey));
}

void VariantDock::apply(const QJsonObject& spec) {
    // Why the pass first: the panel's refresh (every choice checked against the model) then runs
    // beside it instead of before it.
    workspace_->setVariant(spec);
    panel_->setSpec(spec);
    json_->setPlainText(QString::fromUtf8(specText(spec)));
}

bool VariantDock::saveSpec(const QString& path, QString* error) const {
    QSaveFile file(path);
    const bool written = file.open(QIODevice::WriteOnly) &&
                         file.write(specText(panel_->spec())) >= 0 && file.commit();
    if (!written && error) *error = file.errorString();
    return written;
}

void VariantDock::chooseSaveFile() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save variant spec"), QStringLiteral("variant.json"), tr("JSON (*.json)"));
    if (path.isEmpty()) return;
    QString error;
    if (!saveSpec(path, &error))
        QMessageBox::warning(this, tr("Cannot save the variant spec"),
                             tr("Headlight cannot write %1: %2").arg(path, error));
}
} // namespace headlight::app
