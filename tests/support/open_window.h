#pragma once
// The main window opened on a checkpoint for a GUI test, as a user sees it first.

#include "main_window.h"

#include <QSignalSpy>
#include <QString>
#include <QTest>

namespace headlight::test {

// Shows `window` at 1280 × 800 with `text` and opens the checkpoint folder `folder`: true once
// its first pass is shown, false when none is within `waitMs`.
inline bool openShown(app::MainWindow& window, const QString& folder, const QString& text,
                      int waitMs) {
    window.resize(1280, 800);
    window.show();
    QSignalSpy shown(window.workspace(), &app::Workspace::resultShown);
    window.workspace()->setText(text);
    window.openCheckpoint(folder);
    return QTest::qWaitFor([&] { return !shown.isEmpty(); }, waitMs);
}
} // namespace headlight::test
