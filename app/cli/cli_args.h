#pragma once
// A strict argument reader for the CLI commands, driven by the command's declaration
// (cli_command.h): every option must be declared, every valued option must have its value, and
// mistakes throw CliUsageError with a one-line message.

#include "backend/backend_choice.h"
#include "cli_command.h"

#include <QHash>
#include <QStringList>
#include <stdexcept>

namespace headlight::app {

// A one-line refusal; the command prints it after its name and exits non-zero.
class CliError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A mistake in the arguments themselves (an undeclared or incomplete option, a missing required
// one, a wrong operand): printed with the command's usage lines.
class CliUsageError : public CliError {
public:
    using CliError::CliError;
};

// A --model value as given, or the zoo model of that name (resources/models/NAME) when it is a
// bare name and no folder here, as a scene's "model" is read.
QString resolveModelArgument(const QString& value);

class CliArgs {
public:
    // `args` follow the command word. `--help` or `-h` anywhere asks for help instead, even beside
    // a mistake.
    CliArgs(const QStringList& args, const CliCommand& command);
    bool helpAsked() const { return helpAsked_; }
    const QStringList& operands() const { return operands_; }
    bool has(const QString& flag) const { return values_.contains(flag); }
    QString value(const QString& flag) const; // last value given, or empty
    QStringList values(const QString& flag) const { return values_.value(flag); }
    QString required(const QString& flag) const; // throws CliUsageError when missing
    // --model, required, through resolveModelArgument; with --revision, the snapshot folder of
    // that revision of the cached repository --model names (io::resolveModel).
    QString model() const;
    int integer(const QString& flag, int fallback, int minimum, int maximum) const;
    BackendKind backend() const; // --backend, validated

private:
    QHash<QString, QStringList> values_;
    QStringList operands_;
    bool helpAsked_ = false;
};
} // namespace headlight::app
