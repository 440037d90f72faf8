#include "zoo_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPainter>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace headlight::app {
namespace {

// "2.548 nats/byte, next-byte acc. 0.271" (English), "1.9 nats/masked byte, masked-byte acc.
// 0.45" (masked English, the encoders) or "acc. 0.343, exact 0.002" (a task).
QString resultText(const QJsonObject& r, const QString& task) {
    if (task == QLatin1String("english") || task == QLatin1String("masked_english")) {
        const bool masked = task == QLatin1String("masked_english");
        return QStringLiteral("%1 nats/%2byte, %3-byte acc. %4")
            .arg(r["heldout_loss"].toDouble(), 0, 'f', 3)
            .arg(masked ? QStringLiteral("masked ") : QString())
            .arg(masked ? QStringLiteral("masked") : QStringLiteral("next"))
            .arg(r["heldout_accuracy"].toDouble(), 0, 'f', 3);
    }
    QString text = QStringLiteral("acc. %1, exact %2")
                       .arg(r["accuracy"].toDouble(), 0, 'f', 3)
                       .arg(r["exact"].toDouble(), 0, 'f', 3);
    if (r.contains("long"))
        text += QStringLiteral("; at %1 items acc. %2")
                    .arg(r["long"]["pairs"].toInt())
                    .arg(r["long"]["accuracy"].toDouble(), 0, 'f', 3);
    return text;
}

double folderMegabytes(const QDir& folder) {
    qint64 bytes = 0;
    for (const QFileInfo& file : folder.entryInfoList(QDir::Files))
        bytes += file.size();
    return double(bytes) / 1e6;
}

ZooEntry readEntry(const QDir& folder) {
    ZooEntry entry;
    entry.name = folder.dirName();
    entry.folder = folder.absolutePath();
    entry.megabytes = folderMegabytes(folder);
    QFile file(folder.filePath(QStringLiteral("zoo.json")));
    QJsonParseError error{};
    const QJsonObject zoo = file.open(QIODevice::ReadOnly)
                                ? QJsonDocument::fromJson(file.readAll(), &error).object()
                                : QJsonObject();
    if (zoo.isEmpty()) {
        entry.result = QObject::tr("zoo.json cannot be read");
        return entry;
    }
    entry.task = zoo["task"].toString();
    entry.description = zoo["description"].toString();
    entry.exampleText = zoo["example_text"].toString();
    entry.parameters = zoo["parameters"].toInteger();
    entry.result = resultText(zoo["result"].toObject(), entry.task);
    for (const QJsonValue point : zoo["loss_curve"].toArray())
        entry.lossCurve.emplace_back(point[0].toDouble(), point[1].toDouble());
    return entry;
}

// Paints one line chart with the figures' code.
class LineChartView : public QWidget {
public:
    LineChartView(const render::LineChartFigure* figure, QWidget* parent)
        : QWidget(parent)
        , figure_(figure) {
        setMinimumHeight(220);
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter painter(this);
        render::paintLineChart(painter, rect(), *figure_);
    }

private:
    const render::LineChartFigure* figure_;
};
} // namespace

std::vector<ZooEntry> readZoo(const QString& modelsFolder) {
    std::vector<ZooEntry> entries;
    const QDir root(modelsFolder);
    for (const QString& name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (QFileInfo::exists(root.filePath(name + QStringLiteral("/zoo.json"))))
            entries.push_back(readEntry(QDir(root.filePath(name))));
    return entries;
}

ZooDialog::ZooDialog(const QString& modelsFolder, QWidget* parent)
    : QDialog(parent)
    , entries_(readZoo(modelsFolder))
    , table_(new QTableWidget(this))
    , chart_(new LineChartView(&curve_, this)) {
    setWindowTitle(tr("Open a zoo model"));
    resize(1100, 640);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_, 3);
    layout->addWidget(chart_, 2);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &ZooDialog::openSelected);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(table_, &QTableWidget::cellDoubleClicked, this, &ZooDialog::openSelected);
    connect(table_, &QTableWidget::currentCellChanged, this, [this](int row) { select(row); });
    fillTable();
    if (!entries_.empty()) table_->selectRow(0);
}

void ZooDialog::fillTable() {
    const QStringList header{tr("Model"),      tr("Task"),      tr("What it is"),
                             tr("Parameters"), tr("Size (MB)"), tr("Held-out result")};
    table_->setColumnCount(int(header.size()));
    table_->setHorizontalHeaderLabels(header);
    table_->setRowCount(int(entries_.size()));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int row = 0; row < int(entries_.size()); ++row) {
        const ZooEntry& e = entries_[std::size_t(row)];
        const QStringList cells{e.name,
                                e.task,
                                e.description,
                                QLocale().toString(e.parameters),
                                QString::number(e.megabytes, 'f', 2),
                                e.result};
        for (int col = 0; col < int(cells.size()); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setToolTip(cells[col]);
            table_->setItem(row, col, item);
        }
    }
    table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    table_->resizeColumnsToContents();
}

void ZooDialog::select(int row) {
    if (row < 0 || row >= int(entries_.size())) return;
    const ZooEntry& e = entries_[std::size_t(row)];
    curve_ = {tr("%1 · training loss (%2)").arg(e.name, e.task), tr("Step"),
              tr("Loss (nats per predicted byte)"), e.lossCurve};
    chart_->update();
}

void ZooDialog::openSelected() {
    const int row = table_->currentRow();
    if (row < 0 || row >= int(entries_.size())) return;
    Q_EMIT modelChosen(entries_[std::size_t(row)].folder, entries_[std::size_t(row)].exampleText);
    accept();
}
} // namespace headlight::app
