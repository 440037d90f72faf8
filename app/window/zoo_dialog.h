#pragma once
// File ▸ Open zoo model… (Ctrl+Shift+O): the trained zoo (resources/models/*/zoo.json, docs/zoo.md)
// as a table of name, task, what the model is, parameters, size on disk and held-out result, with
// the selected model's training loss curve under it. Open (or a double-click) loads the model
// with its example text.

#include "figures/line_chart.h"

#include <QDialog>
#include <QString>
#include <vector>

class QTableWidget;

namespace headlight::app {

struct ZooEntry {
    QString name, folder, task, description, result, exampleText;
    qint64 parameters = 0;
    double megabytes = 0.0;         // every file of the folder
    std::vector<QPointF> lossCurve; // (step, training loss)
};

// Every folder of `modelsFolder` with a zoo.json, by name; a zoo.json that cannot be read gives
// an entry whose result says so.
std::vector<ZooEntry> readZoo(const QString& modelsFolder);

class ZooDialog : public QDialog {
    Q_OBJECT
public:
    ZooDialog(const QString& modelsFolder, QWidget* parent = nullptr);

    QTableWidget* table() const { return table_; }
    const std::vector<ZooEntry>& entries() const { return entries_; }
    const render::LineChartFigure& curve() const { return curve_; }
    void select(int row);

Q_SIGNALS:
    void modelChosen(const QString& folder, const QString& exampleText);

private:
    void fillTable();
    void openSelected();

    std::vector<ZooEntry> entries_;
    QTableWidget* table_;
    QWidget* chart_;
    render::LineChartFigure curve_;
};
} // namespace headlight::app
