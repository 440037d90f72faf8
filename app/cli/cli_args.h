#pragma once
// A strict argument reader for the CLI commands: every flag must be known, every valued flag must
// have its value, and mistakes throw CliError with a one-line message.

#include <QHash>
#include <QStringList>
#include <optional>
#include <stdexcept>

#include "backend/backend_choice.h"

namespace headlight::app {

class CliError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class CliArgs {
public:
    // `switches` take no value; `valued` take exactly one (and may repeat: values() has them all).
    CliArgs(const QStringList& args, const QStringList& switches, const QStringList& valued);
    bool has(const QString& flag) const { return values_.contains(flag); }
    QString value(const QString& flag) const; // last value given, or empty
    QStringList values(const QString& flag) const { return values_.value(flag); }
    QString required(const QString& flag) const; // throws CliError when missing
    int integer(const QString& flag, int fallback, int minimum, int maximum) const;
    BackendKind backend() const; // --backend, validated

private:
    QHash<QString, QStringList> values_;
};
} // namespace headlight::app
