#pragma once
// `headlight export --checkpoints SOURCE`: a view drawn at every checkpoint of a training series
// as numbered frames, or the lines over training (--view training) as a figure or CSV
// (docs/scrubber.md). Run by cli_export.cpp.

#include <QStringList>

namespace headlight::app {

class CliArgs;

// Throws CliError or std::exception with a one-line reason.
int runCheckpointExport(const CliArgs& args, const QStringList& regenerationCommand);
} // namespace headlight::app
