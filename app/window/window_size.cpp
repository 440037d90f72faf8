#include "window_size.h"

#include <QScreen>

namespace headlight::app {

QSize defaultWindowSize(const QSize& available) {
    return kPreferredWindowSize.boundedTo(available - kWindowFrameAllowance);
}

QSize defaultWindowSize(const QScreen* screen) {
    return screen ? defaultWindowSize(screen->availableGeometry().size()) : kPreferredWindowSize;
}
} // namespace headlight::app
