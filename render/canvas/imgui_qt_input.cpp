#include "imgui_qt_input.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QWindow>
#include <imgui.h>

namespace headlight::render {
namespace {

// Qt keys are large enums; ImGui 1.86 keeps a 512-entry KeysDown array. Map the few keys ImGui
// needs to small slots.
struct KeySlot {
    int qtKey;
    ImGuiKey imguiKey;
};
constexpr KeySlot kKeys[] = {
    {Qt::Key_Tab, ImGuiKey_Tab},         {Qt::Key_Left, ImGuiKey_LeftArrow},
    {Qt::Key_Right, ImGuiKey_RightArrow}, {Qt::Key_Up, ImGuiKey_UpArrow},
    {Qt::Key_Down, ImGuiKey_DownArrow},  {Qt::Key_PageUp, ImGuiKey_PageUp},
    {Qt::Key_PageDown, ImGuiKey_PageDown}, {Qt::Key_Home, ImGuiKey_Home},
    {Qt::Key_End, ImGuiKey_End},         {Qt::Key_Delete, ImGuiKey_Delete},
    {Qt::Key_Backspace, ImGuiKey_Backspace}, {Qt::Key_Return, ImGuiKey_Enter},
    {Qt::Key_Escape, ImGuiKey_Escape},
};

int slotOf(int qtKey) {
    for (int i = 0; i < static_cast<int>(std::size(kKeys)); ++i)
        if (kKeys[i].qtKey == qtKey) return i + 1;
    return -1;
}

int buttonIndex(Qt::MouseButton button) {
    switch (button) {
    case Qt::LeftButton: return 0;
    case Qt::RightButton: return 1;
    case Qt::MiddleButton: return 2;
    default: return -1;
    }
}
} // namespace

ImGuiQtInput::ImGuiQtInput(QWindow* window) : QObject(window), window_(window) {
    window->installEventFilter(this);
}

void ImGuiQtInput::mapKeys() {
    ImGuiIO& io = ImGui::GetIO();
    for (int i = 0; i < static_cast<int>(std::size(kKeys)); ++i) io.KeyMap[kKeys[i].imguiKey] = i + 1;
}

bool ImGuiQtInput::eventFilter(QObject* watched, QEvent* event) {
    if (watched != window_ || !ImGui::GetCurrentContext()) return false;
    ImGuiIO& io = ImGui::GetIO();
    switch (event->type()) {
    case QEvent::MouseMove:
    case QEvent::MouseButtonPress:
    case QEvent::MouseButtonRelease: {
        auto* mouse = static_cast<QMouseEvent*>(event);
        io.MousePos = ImVec2(float(mouse->position().x()), float(mouse->position().y()));
        const int index = buttonIndex(mouse->button());
        if (index >= 0 && event->type() != QEvent::MouseMove)
            io.MouseDown[index] = event->type() == QEvent::MouseButtonPress;
        break;
    }
    case QEvent::Leave: io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX); break;
    case QEvent::Wheel: {
        auto* wheel = static_cast<QWheelEvent*>(event);
        io.MouseWheel += float(wheel->angleDelta().y()) / 120.0f;
        io.MouseWheelH += float(wheel->angleDelta().x()) / 120.0f;
        break;
    }
    case QEvent::KeyPress:
    case QEvent::KeyRelease: {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool down = event->type() == QEvent::KeyPress;
        if (const int slot = slotOf(key->key()); slot > 0) io.KeysDown[slot] = down;
        io.KeyCtrl = key->modifiers() & Qt::ControlModifier;
        io.KeyShift = key->modifiers() & Qt::ShiftModifier;
        io.KeyAlt = key->modifiers() & Qt::AltModifier;
        if (down && !key->text().isEmpty()) io.AddInputCharactersUTF8(key->text().toUtf8().constData());
        break;
    }
    default: return false;
    }
    window_->requestUpdate();
    return false;
}
} // namespace headlight::render
