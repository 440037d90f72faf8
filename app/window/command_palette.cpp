#include "command_palette.h"

#include <QCoreApplication>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLineEdit>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace headlight::app {
namespace {

// Whether the letters of `word` occur in `text` in order.
bool inOrder(const QString& word, const QString& text) {
    qsizetype at = 0;
    for (const QChar letter : word) {
        at = text.indexOf(letter, at);
        if (at < 0) return false;
        ++at;
    }
    return true;
}

// How well one query word matches `text` (both lower case): 3 a word's start, 2 anywhere inside,
// 1 its letters in order, -1 not at all.
int wordMatch(const QString& word, const QString& text) {
    for (qsizetype at = text.indexOf(word); at >= 0; at = text.indexOf(word, at + 1))
        if (at == 0 || !text[at - 1].isLetterOrNumber()) return 3;
    if (text.contains(word)) return 2;
    return inOrder(word, text) ? 1 : -1;
}
} // namespace

int paletteMatch(const QString& query, const QString& text) {
    const QString wanted = query.simplified().toLower();
    const QString plain = text.toLower();
    if (wanted.isEmpty()) return 0;
    int score = plain.startsWith(wanted) ? 100 : 0;
    for (const QString& word : wanted.split(' ')) {
        const int match = wordMatch(word, plain);
        if (match < 0) return -1;
        score += match;
    }
    return score;
}

CommandPalette::CommandPalette(std::vector<PaletteEntry> entries, QWidget* parent)
    : QDialog(parent)
    , entries_(std::move(entries))
    , filter_(new QLineEdit(this))
    , list_(new QTreeWidget(this)) {
    setWindowTitle(tr("Find a view, lesson, model or command"));
    // Why larger than the window's text: the palette is read from the back of a classroom too.
    QFont larger = font();
    larger.setPointSizeF(larger.pointSizeF() * 1.2);
    setFont(larger);
    filter_->setPlaceholderText(tr("Type to find a view, lesson, model or command; Enter runs it"));
    filter_->setClearButtonEnabled(true);
    list_->setColumnCount(2);
    list_->setHeaderHidden(true);
    list_->setRootIsDecorated(false);
    list_->setUniformRowHeights(true);
    list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    list_->header()->setStretchLastSection(false);
    // Why: the typing stays in the filter; Up and Down reach the list through eventFilter.
    list_->setFocusPolicy(Qt::NoFocus);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(filter_);
    layout->addWidget(list_);
    resize(620, 420);
    filter_->installEventFilter(this);
    connect(filter_, &QLineEdit::textChanged, this, &CommandPalette::showMatches);
    connect(filter_, &QLineEdit::returnPressed, this, &CommandPalette::runSelected);
    connect(list_, &QTreeWidget::itemActivated, this, &CommandPalette::runSelected);
    showMatches({});
    filter_->setFocus();
}

// The entries that match, best first and in the window's order among equals.
void CommandPalette::showMatches(const QString& query) {
    std::vector<std::pair<int, std::size_t>> ranked;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        const int score = paletteMatch(query, entries_[i].text + ' ' + entries_[i].where);
        if (score >= 0) ranked.emplace_back(-score, i);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    list_->clear();
    for (const auto& [score, index] : ranked) {
        auto* item = new QTreeWidgetItem(list_, {entries_[index].text, entries_[index].where});
        item->setData(0, Qt::UserRole, qulonglong(index));
        item->setForeground(1, palette().placeholderText());
    }
    if (list_->topLevelItemCount() > 0) list_->setCurrentItem(list_->topLevelItem(0));
}

bool CommandPalette::runSelected() {
    const QTreeWidgetItem* item = list_->currentItem();
    if (!item) return false;
    const std::function<void()> run =
        entries_[std::size_t(item->data(0, Qt::UserRole).toULongLong())].run;
    accept();
    // Why after the palette has closed: the entry may open a dialog of its own.
    QTimer::singleShot(0, parent() ? parent() : QCoreApplication::instance(), run);
    return true;
}

// Up, Down, Page Up and Page Down in the filter move through the list, so the hands stay on
// the keyboard.
bool CommandPalette::eventFilter(QObject* watched, QEvent* event) {
    if (watched == filter_ && event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent*>(event)->key();
        if (key == Qt::Key_Up || key == Qt::Key_Down || key == Qt::Key_PageUp ||
            key == Qt::Key_PageDown) {
            QCoreApplication::sendEvent(list_, event);
            return true;
        }
    }
    return QDialog::eventFilter(watched, event);
}
} // namespace headlight::app
