#include "cli_args.h"

#include <algorithm>
#include <optional>

namespace headlight::app {
namespace {

const CliOption* findOption(const CliCommand& command, const QString& flag) {
    const auto found =
        std::find_if(command.options.begin(), command.options.end(),
                     [&flag](const CliOption& option) { return option.flag == flag; });
    return found == command.options.end() ? nullptr : &*found;
}

bool isHelp(const QString& word) {
    return word == QLatin1String("--help") || word == QLatin1String("-h");
}
} // namespace

CliArgs::CliArgs(const QStringList& args, const CliCommand& command) {
    std::optional<std::string> mistake; // the first; thrown unless help was asked for
    const auto note = [&mistake](const std::string& message) {
        if (!mistake) mistake = message;
    };
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString& word = args[i];
        const CliOption* option = findOption(command, word);
        if (isHelp(word))
            helpAsked_ = true;
        else if (option && !option->takesValue())
            values_[word].append(QString());
        else if (option && i + 1 < args.size())
            values_[word].append(args[++i]);
        else if (option)
            note(word.toStdString() + " needs a value");
        else if (!word.startsWith(QLatin1Char('-')) &&
                 (std::size_t(operands_.size()) < command.operands.size() ||
                  (!command.operands.empty() && command.operands.back().repeats)))
            operands_.append(word);
        else
            note("unknown argument '" + word.toStdString() + "'");
    }
    if (mistake && !helpAsked_) throw CliUsageError(*mistake);
}

QString CliArgs::value(const QString& flag) const {
    const QStringList list = values_.value(flag);
    return list.isEmpty() ? QString() : list.last();
}

QString CliArgs::required(const QString& flag) const {
    if (!has(flag)) throw CliUsageError(flag.toStdString() + " is required");
    return value(flag);
}

int CliArgs::integer(const QString& flag, int fallback, int minimum, int maximum) const {
    if (!has(flag)) return fallback;
    bool ok = false;
    const int number = value(flag).toInt(&ok);
    if (!ok || number < minimum || number > maximum)
        throw CliError(flag.toStdString() + " must be an integer from " + std::to_string(minimum) +
                       " to " + std::to_string(maximum) + ", not '" + value(flag).toStdString() +
                       "'");
    return number;
}

BackendKind CliArgs::backend() const {
    const auto kind = parseBackend(value("--backend").toStdString());
    if (!kind)
        throw CliError("--backend must be 'cpu' or 'vulkan', not '" +
                       value("--backend").toStdString() + "'");
    return *kind;
}
} // namespace headlight::app
