#pragma once
// What this build of Headlight is: its version (the CMake project's) and the git revision of the
// source tree it was configured from, for `headlight --version`, Help ▸ About and the provenance
// written into every exported figure. Why a generated .cpp and not a compile definition: the
// revision changes with every commit, and only this one file should rebuild when it does.

#include <QString>

namespace headlight::app {

QString headlightVersion(); // "0.1.0"
QString buildRevision();    // "fed71f0" (with "-dirty" for uncommitted changes), or "unknown"
} // namespace headlight::app
