#pragma once
// File ▸ Open from Hugging Face cache…: every model of the local Hugging Face hub cache
// (io::hubCacheRoot()) as a table of id, architecture, size on disk, stored dtypes and whether
// Headlight can run it (and, when not, why), with a filter box over the ids and architectures.
// The first runnable model shown is selected; Open (or a double-click) on a runnable model emits
// its ORG/NAME id. Read offline.

#include "model/cached_model_survey.h"

#include <QDialog>
#include <QString>
#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace headlight::app {

class HubCacheDialog : public QDialog {
    Q_OBJECT
public:
    explicit HubCacheDialog(QWidget* parent = nullptr);

    QLineEdit* filter() const { return filter_; }
    QTableWidget* table() const { return table_; }
    QPushButton* openButton() const { return open_; }
    const std::vector<CachedModelSurvey>& models() const { return models_; }

Q_SIGNALS:
    void modelChosen(const QString& repoId);

private:
    void fillTable();
    void applyFilter(const QString& text);
    void selectFirstRunnable(); // the first shown row Headlight can run, if any
    void updateOpenButton();
    const CachedModelSurvey* selectedModel() const;
    void openSelected();

    QString cacheFolder_;
    std::vector<CachedModelSurvey> models_;
    QLabel* where_;
    QLineEdit* filter_;
    QTableWidget* table_;
    QPushButton* open_;
};
} // namespace headlight::app
