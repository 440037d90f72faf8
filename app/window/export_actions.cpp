#include "export_actions.h"

#include "atlas_page.h"
#include "export_files.h"
#include "figure_view.h"
#include "main_window.h"
#include "provenance.h"
#include "scene_render.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStatusBar>
#include <algorithm>
#include <exception>

namespace headlight::app {
namespace {

// "PNG image (*.png)" -> "png".
QString filterSuffix(const QString& filter) {
    static const QRegularExpression pattern(QStringLiteral("\\*\\.(\\w+)"));
    return pattern.match(filter).captured(1);
}

// A name typed without an extension takes the chosen filter's.
QString withSuffix(const QString& path, const QString& filter) {
    if (exportFormatFor(path)) return path;
    return path + QLatin1Char('.') + filterSuffix(filter);
}

// Why a box in the dialog's own grid: the DPI belongs to the choice of file, and a second
// dialog after the file one would be one more step for the most common export.
QSpinBox* addDpiBox(QFileDialog* dialog) {
    auto* dpi = new QSpinBox(dialog);
    dpi->setObjectName(QStringLiteral("exportDpi"));
    dpi->setRange(render::kMinDpi, render::kMaxDpi);
    dpi->setValue(ExportActions::kDefaultDpi);
    dpi->setSuffix(QObject::tr(" dpi"));
    if (auto* grid = qobject_cast<QGridLayout*>(dialog->layout())) {
        const int row = grid->rowCount();
        grid->addWidget(new QLabel(QObject::tr("PNG resolution:"), dialog), row, 0);
        grid->addWidget(dpi, row, 1);
    }
    QObject::connect(dialog, &QFileDialog::filterSelected, dpi, [dpi](const QString& filter) {
        dpi->setEnabled(filterSuffix(filter) == QLatin1String("png"));
    });
    return dpi;
}
} // namespace

ExportActions::ExportActions(MainWindow* window)
    : QObject(window)
    , window_(window)
    , figure_(new QAction(tr("Export &figure…"), this))
    , data_(new QAction(tr("Export &data…"), this)) {
    setObjectName(QStringLiteral("exportActions"));
    figure_->setObjectName(QStringLiteral("exportFigure"));
    figure_->setShortcut(QKeySequence(tr("Ctrl+E")));
    figure_->setStatusTip(tr("Write the current view as PNG, SVG or PDF"));
    data_->setObjectName(QStringLiteral("exportData"));
    data_->setStatusTip(tr("Write the current view's numbers as CSV or safetensors"));
    connect(figure_, &QAction::triggered, this, &ExportActions::chooseFigureFile);
    connect(data_, &QAction::triggered, this, &ExportActions::chooseDataFile);
}

QFileDialog* ExportActions::saveDialog(const QString& title, const QStringList& filters,
                                       const QString& suffix) {
    auto* dialog = new QFileDialog(window_, title);
    dialog->setObjectName(QStringLiteral("exportDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setFileMode(QFileDialog::AnyFile);
    dialog->setOption(QFileDialog::DontUseNativeDialog); // the DPI box lives in its layout
    dialog->setNameFilters(filters);
    const QString view = window_->workspace()->atlasShown() ? QStringLiteral("atlas")
                                                            : viewId(window_->workspace()->view());
    dialog->selectFile(view + QLatin1Char('.') + suffix);
    return dialog;
}

void ExportActions::chooseFigureFile() {
    QFileDialog* dialog = saveDialog(
        tr("Export figure"),
        {tr("PNG image (*.png)"), tr("SVG vector graphics (*.svg)"), tr("PDF document (*.pdf)")},
        QStringLiteral("png"));
    QSpinBox* dpi = addDpiBox(dialog);
    connect(dialog, &QFileDialog::fileSelected, this, [this, dialog, dpi](const QString& file) {
        exportFigure(withSuffix(file, dialog->selectedNameFilter()), dpi->value());
    });
    dialog->open();
}

void ExportActions::chooseDataFile() {
    QFileDialog* dialog = saveDialog(
        tr("Export data"), {tr("CSV table (*.csv)"), tr("Safetensors tensors (*.safetensors)")},
        QStringLiteral("csv"));
    connect(dialog, &QFileDialog::fileSelected, this, [this, dialog](const QString& file) {
        exportData(withSuffix(file, dialog->selectedNameFilter()));
    });
    dialog->open();
}

render::ExportOptions ExportActions::pageOptions() const {
    render::ExportOptions options;
    const Workspace* workspace = window_->workspace();
    const QSize shown = workspace->atlasShown() ? workspace->atlasPage()->view()->size()
                                                : workspace->figureView()->size();
    if (shown.width() >= render::kLayoutDpi && shown.height() >= render::kLayoutDpi)
        options.inches = QSizeF(shown) / render::kLayoutDpi;
    // Why the scenario's caption: `headlight reproduce` redraws a window export with `export
    // --scenario`, which captions the same scenario the same way, so the pixels match.
    if (const ForwardResult* result = window_->workspace()->result(); result && result->model) {
        io::Scenario scenario = window_->workspace()->scenario();
        scenario.text = result->text.toStdString();
        options.caption = scenarioCaption(scenario, *result->model);
    }
    return options;
}

bool ExportActions::exportFigure(const QString& path, int dpi) {
    render::ExportOptions options = pageOptions();
    options.dpi = dpi;
    if (exportFormatFor(path) && !isFigureFormat(*exportFormatFor(path))) {
        window_->showError(tr("Cannot export the figure"),
                           tr("Headlight did not write %1.").arg(QDir::toNativeSeparators(path)),
                           tr("A figure is written as .png, .svg or .pdf; Export data… writes "
                              ".csv and .safetensors."));
        return false;
    }
    return write(path, options, tr("figure"));
}

bool ExportActions::exportData(const QString& path) {
    if (exportFormatFor(path) && isFigureFormat(*exportFormatFor(path))) {
        window_->showError(tr("Cannot export the data"),
                           tr("Headlight did not write %1.").arg(QDir::toNativeSeparators(path)),
                           tr("Data is written as .csv or .safetensors; Export figure… writes "
                              ".png, .svg and .pdf."));
        return false;
    }
    return write(path, pageOptions(), tr("data"));
}

namespace {

QString number(double value) {
    return QString::number(value, 'g', 17); // round-trips, so --size gives the same page
}

// The shown figure's provenance: what ran it, and the `headlight export --scenario` command that
// draws the same view with the same page (docs/export.md says what may still differ).
QString provenanceJson(const ForwardResult& result, io::Scenario scenario,
                       const render::PageContent& content, const QString& path,
                       const render::ExportOptions& options) {
    scenario.text = result.text.toStdString();
    scenario.backend = result.model->backend->kind(); // as --backend pins it below
    Provenance provenance = describeExport(*result.model, scenario, content);
    const QString scene = QString::fromUtf8(
        QJsonDocument(io::scenarioToJson(scenario)).toJson(QJsonDocument::Compact));
    provenance.command = {QStringLiteral("export"),
                          QStringLiteral("--dpi"),
                          QString::number(options.dpi),
                          QStringLiteral("--size"),
                          number(options.inches.width()) + QLatin1Char('x') +
                              number(options.inches.height()),
                          QStringLiteral("--backend"),
                          provenance.backend,
                          QStringLiteral("--out"),
                          QFileInfo(path).fileName(),
                          QStringLiteral("--scenario"),
                          scene};
    return QString::fromUtf8(
        QJsonDocument(provenanceToJson(provenance)).toJson(QJsonDocument::Compact));
}
} // namespace

bool ExportActions::write(const QString& path, render::ExportOptions options, const QString& what) {
    const QString shown = QDir::toNativeSeparators(path);
    try {
        if (window_->workspace()->canvasShown())
            throw std::runtime_error("the Vulkan canvas tab has no figure to export; pick one of "
                                     "the other views");
        const Workspace* workspace = window_->workspace();
        if (workspace->atlasShown()) {
            // The Atlas exports the region in view, as `headlight export --view atlas --region`.
            workspace->atlasPage()->exportRegion(path, options);
        } else {
            const FigureView* view = workspace->figureView();
            const render::PageContent content = view->panels()
                                                    ? render::PageContent(*view->panels())
                                                    : render::PageContent(view->figure());
            const ForwardResult* result = workspace->result();
            if (result && result->model)
                options.provenance =
                    provenanceJson(*result, workspace->scenario(), content, path, options);
            exportToFile(path, content, options);
        }
    } catch (const std::exception& error) {
        window_->showError(tr("Cannot export the %1").arg(what),
                           tr("Headlight could not write %1.").arg(shown),
                           QString::fromUtf8(error.what()));
        return false;
    }
    window_->statusBar()->showMessage(tr("Exported the %1 to %2").arg(what, shown), 6000);
    return true;
}
} // namespace headlight::app
