#pragma once
// The window's views in one bar: each group's name, then its views as buttons. Groups wrap onto
// a second row when the window is narrow, so every view is one click away at 1280×800 (a tab bar
// of 22 views hid nine behind scroll arrows there). Indices are the workspace's: the ViewKinds,
// then the GPU canvas and the Atlas.

#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

class QAbstractButton;
class QButtonGroup;

namespace headlight::app {

class ViewBar : public QWidget {
    Q_OBJECT
public:
    struct Entry {
        QString label;
        QString group; // entries of a group are shown together
        QString toolTip;
    };
    // Groups named in `groupOrder` come first, in that order; the others follow in the order of
    // their first entry.
    explicit ViewBar(const std::vector<Entry>& entries, const QStringList& groupOrder = {},
                     QWidget* parent = nullptr);

    int count() const { return int(entries_.size()); }
    int currentIndex() const { return current_; }
    // Checks the entry's button and emits currentChanged when the index changes.
    void setCurrentIndex(int index);
    QAbstractButton* button(int index) const;

Q_SIGNALS:
    void currentChanged(int index);

private:
    QWidget* createGroup(const QString& name);

    std::vector<Entry> entries_;
    QButtonGroup* buttons_;
    int current_ = -1;
};
} // namespace headlight::app
