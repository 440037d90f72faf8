#pragma once
// Help texts generated from the command table (cli_command.h).

#include "cli_command.h"

namespace headlight::app {

QString usageLines(const CliCommand& command);  // "usage: headlight NAME ...", one line per form
QString commandHelp(const CliCommand& command); // `headlight NAME --help`
QString programHelp();                          // `headlight --help`: the window and every command
QString manPage();                              // `headlight help --man`: roff, for man(1)
} // namespace headlight::app
