#pragma once
// `headlight export --view atlas` (cli_atlas.cpp says how it draws), run by cli_export.cpp.

#include "export/figure_export.h"

#include <QString>
#include <QStringList>

namespace headlight::app {

class CliArgs;

// The text --text gives, or the whole of --text-file's file. Throws CliError.
QString exportText(const CliArgs& args);
// Draws the atlas the arguments ask for into --out with `options` (page size, dpi) and the
// provenance of `regenerationCommand`. Throws CliError or std::exception with a one-line reason.
int runAtlasExport(const CliArgs& args, render::ExportOptions options,
                   const QStringList& regenerationCommand);
} // namespace headlight::app
