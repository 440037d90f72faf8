#include "view_bar.h"

#include "flow_layout.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <map>

namespace headlight::app {

ViewBar::ViewBar(const std::vector<Entry>& entries, const QStringList& groupOrder, QWidget* parent)
    : QWidget(parent)
    , entries_(entries)
    , buttons_(new QButtonGroup(this)) {
    setObjectName(QStringLiteral("viewBar"));
    // Why a style sheet: the checked view must read as selected on a projector, where a flat
    // tool button's sunken frame is hard to see. Why 3 px at the sides: with 24 views the groups
    // still wrap onto three rows at 1280 × 800 beside the right-hand docks (with the group order
    // the workspace gives).
    setStyleSheet(QStringLiteral(
        "QToolButton { padding: 3px 3px; border: 1px solid transparent; border-radius: 4px; }"
        "QToolButton:hover { border-color: palette(mid); }"
        "QToolButton:checked { background: palette(highlight); color: palette(highlighted-text); }"
        "QLabel { color: palette(dark); padding-left: 6px; }"));
    auto* flow = new FlowLayout(this, 10, 2);
    std::map<QString, QWidget*> groups;
    for (const QString& name : groupOrder) {
        groups[name] = createGroup(name);
        flow->addWidget(groups[name]);
    }
    for (int i = 0; i < count(); ++i) {
        const Entry& entry = entries_[std::size_t(i)];
        QWidget*& group = groups[entry.group];
        if (!group) {
            group = createGroup(entry.group);
            flow->addWidget(group);
        }
        auto* button = new QToolButton(group);
        button->setText(entry.label);
        button->setToolTip(entry.toolTip);
        button->setCheckable(true);
        button->setAutoRaise(true);
        group->layout()->addWidget(button);
        buttons_->addButton(button, i);
    }
    connect(buttons_, &QButtonGroup::idClicked, this, &ViewBar::setCurrentIndex);
}

QWidget* ViewBar::createGroup(const QString& name) {
    auto* group = new QWidget(this);
    auto* row = new QHBoxLayout(group);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(1);
    row->addWidget(new QLabel(name, group));
    return group;
}

void ViewBar::setCurrentIndex(int index) {
    if (index < 0 || index >= count()) return;
    buttons_->button(index)->setChecked(true);
    if (index == current_) return;
    current_ = index;
    Q_EMIT currentChanged(index);
}

QAbstractButton* ViewBar::button(int index) const {
    return buttons_->button(index);
}
} // namespace headlight::app
