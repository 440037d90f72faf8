#pragma once
// File ▸ Export figure… (Ctrl+E) and File ▸ Export data… for the window's current view: a save
// dialog with one filter per format (and a DPI choice while PNG is picked), then the same export
// as `headlight export` (export_files.h). The page has the view's size on screen, so the file
// looks like the window; the caption names the model, the variant and the text. A failure shows
// the window's error dialog, and the atomic write leaves nothing half-written.

#include "export/figure_export.h"

#include <QObject>
#include <QString>
#include <QStringList>

class QAction;
class QFileDialog;

namespace headlight::app {

class MainWindow;

class ExportActions : public QObject {
    Q_OBJECT
public:
    explicit ExportActions(MainWindow* window);

    QAction* figureAction() const { return figure_; }
    QAction* dataAction() const { return data_; }

    // The exports themselves, for a path already chosen (the format by its extension): true when
    // the file was written, false after the window's error dialog said why not.
    bool exportFigure(const QString& path, int dpi);
    bool exportData(const QString& path);

    static constexpr int kDefaultDpi = 200;

private:
    void chooseFigureFile();
    void chooseDataFile();
    QFileDialog* saveDialog(const QString& title, const QStringList& filters,
                            const QString& suffix);
    bool write(const QString& path, render::ExportOptions options, const QString& what);
    render::ExportOptions pageOptions() const;

    MainWindow* window_;
    QAction* figure_;
    QAction* data_;
};
} // namespace headlight::app
