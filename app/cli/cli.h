#pragma once
// The command-line interface: `headlight COMMAND ...`. Every command prints one line on stderr and
// exits non-zero on bad input; nothing it writes is left half-done.

#include "io/scenario.h"

#include <QStringList>

namespace headlight::app {

bool isCliCommand(const QString& word);
int runCli(int argc, char** argv);

// Each command takes its arguments (after the command word) and returns the exit code.
int runDevicesCommand(const QStringList& args);
int runExportCommand(const QStringList& args);
int runFiguresCommand(const QStringList& args);
int runInspectCommand(const QStringList& args);
int runTokenizeCommand(const QStringList& args);
int runVariantsCommand(const QStringList& args);

// The scenario `headlight export ARGS` draws, from its flags or its --scene file, checked as the
// command checks them, with no model loaded. Throws CliError, io::SceneError or
// variants::VariantError with the command's one-line message.
io::Scenario exportScenario(const QStringList& args);
} // namespace headlight::app
