#pragma once
// What Help ▸ About and `headlight about` say, one fact a line: the Headlight version and git
// revision, the Qt version, the compute backend with its Vulkan device and driver (or why there is
// none), and the resources folder in use. For bug reports: "paste `headlight about`".

#include "backend/backend_choice.h"

#include <QStringList>

namespace headlight::app {

QStringList aboutLines(const BackendChoice& choice);
} // namespace headlight::app
