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
// Why the window's arguments (all but the program name, with no command word) cannot open it:
// an unknown command or option, with the nearest name, an option without its value, or a
// stray word; empty when they are fine. Checked before any GUI object exists, so a typo is
// reported (exit 2) even where no display is.
QString windowArgumentsError(const QStringList& args);
// The name of `names` nearest to `word` in edit distance, when near enough to be a typo of it;
// else empty.
QString nearestName(const QString& word, const QStringList& names);

// Each command's declaration, with the function that runs it (one file per command).
CliCommand aboutCommand();
CliCommand convertCommand();
CliCommand devicesCommand();
CliCommand exportCommand();
CliCommand featuresCommand();
CliCommand figuresCommand();
CliCommand headsCommand();
CliCommand infoCommand();
CliCommand inspectCommand();
CliCommand mergeCommand();
CliCommand patchCommand();
CliCommand reproduceCommand();
CliCommand sinksCommand();
CliCommand steerCommand();
CliCommand tokenizeCommand();
CliCommand variantsCommand();

// The scenario `headlight export ARGS` draws, from its flags or its --scene file, checked as the
// command checks them, with no model loaded. Throws CliError, io::SceneError or
// variants::VariantError with the command's one-line message.
io::Scenario exportScenario(const QStringList& args);
} // namespace headlight::app
