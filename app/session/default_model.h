#pragma once
// Where the embedded zoo lives and which model the window opens when none is named: the
// `resources/models/default.json` of the first resources folder found.

#include <QString>
#include <optional>

namespace headlight::app {

struct DefaultModel {
    QString folder; // absolute checkpoint folder
    QString text;   // example text to start with (may be empty)
};

// The resources folder: $HEADLIGHT_RESOURCES, else next to the executable (../share/headlight as
// `cmake --install` and the Debian package lay it out; ../resources or ../../resources in a build
// tree), else the source tree it was built from.
std::optional<QString> resourcesFolder();
// The default zoo model named by resources/models/default.json ({"model": "...", "text": "..."}).
std::optional<DefaultModel> defaultModel();
} // namespace headlight::app
