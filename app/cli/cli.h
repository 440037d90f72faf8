#pragma once
// The command-line interface: `headlight COMMAND ...`. Every command prints one line on stderr and
// exits non-zero on bad input (a mistake in the arguments themselves adds the usage lines);
// nothing it writes is left half-done. The commands and their options are data (cli_command.h).

#include "cli_command.h"
#include "io/scenario.h"

#include <QStringList>

namespace headlight::app {

bool isCliCommand(const QString& word);
int runCli(int argc, char** argv);

// Each command's declaration, with the function that runs it (one file per command).
CliCommand aboutCommand();
CliCommand convertCommand();
CliCommand devicesCommand();
CliCommand exportCommand();
CliCommand figuresCommand();
CliCommand infoCommand();
CliCommand inspectCommand();
CliCommand mergeCommand();
CliCommand patchCommand();
CliCommand reproduceCommand();
CliCommand tokenizeCommand();
CliCommand variantsCommand();

// The scenario `headlight export ARGS` draws, from its flags or its --scene file, checked as the
// command checks them, with no model loaded. Throws CliError, io::SceneError or
// variants::VariantError with the command's one-line message.
io::Scenario exportScenario(const QStringList& args);
} // namespace headlight::app
