#pragma once
// `headlight export --view atlas` (cli_atlas.cpp says how it draws), run by cli_export.cpp.

#include "export/figure_export.h"
#include "io/scenario.h"

#include <QString>
#include <QStringList>

namespace headlight::app {

class CliArgs;

// The text --text gives, or the whole of --text-file's file. Throws CliError.
QString exportText(const CliArgs& args);
// The scenario an atlas export records, from its arguments alone (`headlight reproduce` compares
// it with the figure's): model, text, view "atlas", layer, head or the heads' mean, variant.
io::Scenario atlasExportScenario(const CliArgs& args);
// Draws the atlas the arguments ask for into --out with `options` (page size, dpi) and the
// provenance of `regenerationCommand`. Throws CliError or std::exception with a one-line reason.
int runAtlasExport(const CliArgs& args, render::ExportOptions options,
                   const QStringList& regenerationCommand);
} // namespace headlight::app
