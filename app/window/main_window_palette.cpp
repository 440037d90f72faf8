// Ctrl+K (command_palette.h): what the window offers, gathered when the palette opens.
#include "command_palette.h"
#include "default_model.h"
#include "main_window.h"
#include "workspace.h"
#include "zoo_dialog.h"

#include <QAction>
#include <QMenu>
#include <QMenuBar>
#include <QPointer>

namespace headlight::app {
namespace {

// A menu entry's text as shown: mnemonics removed ("&&" is a literal ampersand).
QString shownText(QString text) {
    return text.replace(QStringLiteral("&&"), QStringLiteral("\x01"))
        .remove('&')
        .replace('\x01', '&');
}

// Every enabled, visible command under `actions`, with its menu path and shortcut as `where`.
void addMenuEntries(const QList<QAction*>& actions, const QString& path, const QAction* palette,
                    std::vector<PaletteEntry>& entries) {
    for (QAction* action : actions) {
        if (action->isSeparator() || !action->isVisible() || action == palette) continue;
        const QString text = shownText(action->text());
        const QString place = path.isEmpty() ? text : path + QStringLiteral(" ▸ ") + text;
        if (QMenu* menu = action->menu()) {
            addMenuEntries(menu->actions(), place, palette, entries);
            continue;
        }
        if (!action->isEnabled() || text.isEmpty()) continue;
        QString where = path;
        if (!action->shortcut().isEmpty())
            where += QStringLiteral(" · ") + action->shortcut().toString(QKeySequence::NativeText);
        entries.push_back({text, where, [action = QPointer<QAction>(action)] {
                               if (action) action->trigger();
                           }});
    }
}
} // namespace

std::vector<PaletteEntry> MainWindow::paletteEntries() {
    std::vector<PaletteEntry> entries;
    addMenuEntries(menuBar()->actions(), {}, paletteAction_, entries);
    if (const std::optional<QString> resources = resourcesFolder())
        for (const ZooEntry& model : readZoo(*resources + QStringLiteral("/models")))
            entries.push_back({tr("Open zoo model: %1").arg(model.name),
                               tr("File ▸ Open zoo model · %1").arg(model.task),
                               [window = QPointer<MainWindow>(this), model] {
                                   if (window)
                                       window->openZooModel(model.folder, model.exampleText);
                               }});
    return entries;
}

void MainWindow::showPalette() {
    auto* palette = new CommandPalette(paletteEntries(), this);
    palette->setAttribute(Qt::WA_DeleteOnClose);
    palette->move(mapToGlobal(QPoint((width() - palette->width()) / 2, height() / 8)));
    palette->open();
    palette->activateWindow();
}
} // namespace headlight::app
