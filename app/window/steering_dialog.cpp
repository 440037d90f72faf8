#include "steering_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QPlainTextEdit>

namespace headlight::app {
namespace {

QStringList linesOf(const QPlainTextEdit* box) {
    QStringList lines;
    for (const QString& line : box->toPlainText().split('\n'))
        if (!line.trimmed().isEmpty()) lines << line;
    return lines;
}
} // namespace

SteeringDialog::SteeringDialog(int layers, QWidget* parent)
    : QDialog(parent)
    , positive_(new QPlainTextEdit(this))
    , negative_(new QPlainTextEdit(this))
    , hook_(new QComboBox(this))
    , method_(new QComboBox(this)) {
    setWindowTitle(tr("Make steering vector"));
    positive_->setPlaceholderText(tr("I love this.\nWhat a lovely day."));
    negative_->setPlaceholderText(tr("I hate this.\nWhat an awful day."));
    for (int layer = 0; layer < layers; ++layer)
        hook_->addItem(QStringLiteral("blocks.%1.hook_resid_post").arg(layer));
    hook_->setCurrentIndex(layers / 2);
    method_->addItems(kSteeringMethods);
    method_->setItemData(0, tr("The difference of the two sets' means"), Qt::ToolTipRole);
    method_->setItemData(1, tr("repeng's pca_diff: texts paired line by line"), Qt::ToolTipRole);
    method_->setItemData(2, tr("repeng's pca_center: texts paired line by line"), Qt::ToolTipRole);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* form = new QFormLayout(this);
    form->addRow(tr("Steer towards (one text per line)"), positive_);
    form->addRow(tr("Steer away from"), negative_);
    form->addRow(tr("Read and add at"), hook_);
    form->addRow(tr("Method"), method_);
    form->addRow(buttons);
}

SteeringRecipe SteeringDialog::recipe() const {
    return {linesOf(positive_), linesOf(negative_), hook_->currentText().toStdString(),
            method_->currentText().toStdString()};
}
} // namespace headlight::app
