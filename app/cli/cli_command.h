#pragma once
// The command line as data: every command with its operands, options, usage lines and examples,
// declared once. The argument reader (cli_args.h), `--help`, the usage lines printed with an
// argument mistake and `headlight help --man` (cli_help.h) all read this table, so they cannot
// disagree; so can a generator of shell completions.

#include <QString>
#include <QStringList>
#include <vector>

namespace headlight::app {

class CliArgs;

struct CliOption {
    QString flag;        // "--model"
    QString valueName;   // "DIR"; empty for a switch, which takes no value
    QString description; // one line
    bool takesValue() const { return !valueName.isEmpty(); }
};

// A word that is not an option, such as the figure set in `headlight figures realformer`.
struct CliOperand {
    QString name;
    QString description;
    bool repeats = false; // the last operand only: it takes every further word (`merge SHARD...`)
};

struct CliCommand {
    QString name;      // the command word
    QString summary;   // one line, for `headlight --help`
    QStringList usage; // each form of the command, as it follows "headlight NAME"
    std::vector<CliOperand> operands;
    std::vector<CliOption> options;
    QStringList examples;                      // whole command lines
    int (*run)(const CliArgs& args) = nullptr; // returns the exit code
};

// Every command, in the order `headlight --help` lists them.
const std::vector<CliCommand>& cliCommands();
// The options of the window (`headlight` with no command word), which main.cpp parses.
const std::vector<CliOption>& windowOptions();

// Options that several commands take, worded once.
CliOption backendOption();      // --backend cpu|vulkan
CliOption vulkanDeviceOption(); // --vulkan-device SEL
CliOption dpiOption();          // --dpi N, with the export limits
CliOption revisionOption();     // --revision NAME, beside every --model
} // namespace headlight::app
