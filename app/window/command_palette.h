#pragma once
// Ctrl+K: a few typed letters find any view, lesson, zoo model or command of the window, and
// Enter runs it. The window hands in what it offers when the palette opens (its menus, the zoo),
// so the palette knows nothing of them and never offers a stale entry.

#include <QDialog>
#include <QString>
#include <functional>
#include <vector>

class QLineEdit;
class QTreeWidget;

namespace headlight::app {

struct PaletteEntry {
    QString text;  // what is searched and shown: "Head roles", "Open zoo model: copy"
    QString where; // where the same thing is found otherwise: "View", "File ▸ Lessons"
    std::function<void()> run;
};

// How well `query` finds `text`, higher is better, or -1 for no match. Case is ignored; every
// word of the query must match: a text that starts with the query ranks first, then words that
// start one of the text's words, then words found anywhere, then letters found in order.
int paletteMatch(const QString& query, const QString& text);

class CommandPalette : public QDialog {
    Q_OBJECT
public:
    CommandPalette(std::vector<PaletteEntry> entries, QWidget* parent = nullptr);

    QLineEdit* filter() const { return filter_; }
    QTreeWidget* list() const { return list_; }
    // Closes the palette, then runs the selected entry; false when no entry is shown.
    bool runSelected();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void showMatches(const QString& query);

    std::vector<PaletteEntry> entries_;
    QLineEdit* filter_;
    QTreeWidget* list_;
};
} // namespace headlight::app
