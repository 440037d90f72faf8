#include "hub_cache_dialog.h"

#include "io/hub_cache.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace headlight::app {
namespace {
enum Column { Id, Architecture, Size, Dtypes, Runs, ColumnCount };

std::vector<CachedModelSurvey> surveyCache(const std::string& cacheFolder) {
    std::vector<CachedModelSurvey> surveys;
    for (const io::CachedModel& model : io::listCachedModels(cacheFolder))
        surveys.push_back(surveyCachedModel(model));
    return surveys;
}

// "yes", or "no: <reason>" with the snapshot's path left out (the row already names the model).
QString runsText(const CachedModelSurvey& survey) {
    if (survey.runnable) return QObject::tr("yes");
    QString reason = QString::fromStdString(survey.problem);
    const QString snapshot = QString::fromStdString(survey.model.snapshot);
    if (!snapshot.isEmpty()) {
        reason.remove(snapshot + QLatin1String(": "));
        reason.remove(snapshot + QLatin1Char('/'));
    }
    return QObject::tr("no: %1").arg(reason);
}
} // namespace

HubCacheDialog::HubCacheDialog(QWidget* parent)
    : QDialog(parent)
    , cacheFolder_(QString::fromStdString(io::hubCacheRoot().path))
    , models_(surveyCache(cacheFolder_.toStdString()))
    , where_(new QLabel(this))
    , filter_(new QLineEdit(this))
    , table_(new QTableWidget(this)) {
    setWindowTitle(tr("Open from Hugging Face cache"));
    resize(1100, 520);
    auto* layout = new QVBoxLayout(this);
    where_->setText(models_.empty()
                        ? tr("No models in the Hugging Face cache at %1. Headlight never "
                             "downloads; fetch one with huggingface-cli download ORG/NAME.")
                              .arg(QDir::toNativeSeparators(cacheFolder_))
                        : tr("%n model(s) in %1", nullptr, int(models_.size()))
                              .arg(QDir::toNativeSeparators(cacheFolder_)));
    where_->setWordWrap(true);
    where_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(where_);
    filter_->setPlaceholderText(tr("Filter by id or architecture"));
    filter_->setClearButtonEnabled(true);
    layout->addWidget(filter_);
    layout->addWidget(table_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    open_ = buttons->button(QDialogButtonBox::Open);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &HubCacheDialog::openSelected);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(table_, &QTableWidget::cellDoubleClicked, this, &HubCacheDialog::openSelected);
    connect(table_, &QTableWidget::itemSelectionChanged, this, &HubCacheDialog::updateOpenButton);
    connect(filter_, &QLineEdit::textChanged, this, &HubCacheDialog::applyFilter);
    fillTable();
    selectFirstRunnable();
    updateOpenButton();
}

void HubCacheDialog::fillTable() {
    const QStringList header{tr("Model"), tr("Architecture"), tr("Size on disk"), tr("Dtype"),
                             tr("Runs in Headlight")};
    table_->setColumnCount(ColumnCount);
    table_->setHorizontalHeaderLabels(header);
    table_->setRowCount(int(models_.size()));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    for (int row = 0; row < int(models_.size()); ++row) {
        const CachedModelSurvey& m = models_[std::size_t(row)];
        const QStringList cells{QString::fromStdString(m.model.repoId),
                                QString::fromStdString(m.architecture),
                                QLocale().formattedDataSize(m.model.bytesOnDisk),
                                QString::fromStdString(m.dtypes), runsText(m)};
        for (int col = 0; col < ColumnCount; ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setToolTip(cells[col]);
            if (col == Size) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (!m.runnable)
                item->setForeground(palette().brush(QPalette::Disabled, QPalette::Text));
            table_->setItem(row, col, item);
        }
    }
    table_->resizeColumnsToContents();
    table_->horizontalHeader()->setSectionResizeMode(Runs, QHeaderView::Stretch);
}

void HubCacheDialog::applyFilter(const QString& text) {
    for (int row = 0; row < table_->rowCount(); ++row) {
        const bool shown =
            table_->item(row, Id)->text().contains(text, Qt::CaseInsensitive) ||
            table_->item(row, Architecture)->text().contains(text, Qt::CaseInsensitive);
        table_->setRowHidden(row, !shown);
        if (!shown && table_->currentRow() == row) table_->clearSelection();
    }
    if (!selectedModel()) selectFirstRunnable();
    updateOpenButton();
}

const CachedModelSurvey* HubCacheDialog::selectedModel() const {
    const QList<QTableWidgetItem*> selected = table_->selectedItems();
    if (selected.isEmpty()) return nullptr;
    const int row = selected.first()->row();
    return table_->isRowHidden(row) ? nullptr : &models_[std::size_t(row)];
}

void HubCacheDialog::selectFirstRunnable() {
    for (int row = 0; row < table_->rowCount(); ++row)
        if (!table_->isRowHidden(row) && models_[std::size_t(row)].runnable) {
            table_->selectRow(row);
            return;
        }
}

void HubCacheDialog::updateOpenButton() {
    const CachedModelSurvey* model = selectedModel();
    open_->setEnabled(model && model->runnable);
}

void HubCacheDialog::openSelected() {
    const CachedModelSurvey* model = selectedModel();
    if (!model || !model->runnable) return;
    Q_EMIT modelChosen(QString::fromStdString(model->model.repoId));
    accept();
}
} // namespace headlight::app
