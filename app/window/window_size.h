#pragma once
// The size the main window opens at when no earlier session left one: 1440 × 900, or less where
// the screen's available area (without panels and docks) is smaller, with room left for the
// window manager's title bar and frame, so a 1366 × 768 laptop or projector shows all of it.

#include <QSize>

class QScreen;

namespace headlight::app {

inline constexpr QSize kPreferredWindowSize{1440, 900};
// What the window manager's frame and title bar take around the window, at most (a guess: the
// frame is drawn outside the size resize() sets).
inline constexpr QSize kWindowFrameAllowance{16, 48};

QSize defaultWindowSize(const QSize& available);
// As above for `screen`'s available area; the preferred size when there is no screen.
QSize defaultWindowSize(const QScreen* screen);
} // namespace headlight::app
