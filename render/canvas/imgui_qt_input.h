#pragma once
// Feeds Qt input events of one window into Dear ImGui's IO (1.86 API: io.MousePos, io.MouseDown,
// io.KeysDown). Positions come from the events themselves, never QCursor::pos(), so synthetic
// QTest events work. There is no Qt backend in Dear ImGui; this is ours.

#include <QObject>

class QWindow;

namespace headlight::render {

class ImGuiQtInput : public QObject {
    Q_OBJECT
public:
    explicit ImGuiQtInput(QWindow* window); // installs itself as an event filter on `window`
    static void mapKeys();                  // sets io.KeyMap once per ImGui context

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWindow* window_;
};
} // namespace headlight::render
