#include "cli_args.h"

#include "cli.h"
#include "default_model.h"
#include "io/hub_cache.h"

#include <QFileInfo>
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

// " (did you mean --model?)" for a mistyped option, else "".
std::string nearestOption(const CliCommand& command, const QString& flag) {
    if (!flag.startsWith(QLatin1String("--"))) return {};
    QStringList flags;
    for (const CliOption& option : command.options)
        flags << option.flag;
    const QString nearest = nearestName(flag, flags);
    return nearest.isEmpty() ? std::string() : " (did you mean " + nearest.toStdString() + "?)";
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
        // "--flag=value" is "--flag value", as GNU getopt and QCommandLineParser read it.
        const qsizetype equals = word.startsWith(QLatin1String("--")) ? word.indexOf('=') : -1;
        const QString flag = equals < 0 ? word : word.left(equals);
        const CliOption* option = findOption(command, flag);
        if (isHelp(word))
            helpAsked_ = true;
        else if (option && !option->takesValue() && equals >= 0)
            note(flag.toStdString() + " takes no value");
        else if (option && !option->takesValue())
            values_[flag].append(QString());
        else if (option && equals >= 0)
            values_[flag].append(word.mid(equals + 1));
        else if (option && i + 1 < args.size())
            values_[flag].append(args[++i]);
        else if (option)
            note(flag.toStdString() + " needs a value");
        else if (!word.startsWith(QLatin1Char('-')) &&
                 (std::size_t(operands_.size()) < command.operands.size() ||
                  (!command.operands.empty() && command.operands.back().repeats)))
            operands_.append(word);
        else
            note("unknown argument '" + word.toStdString() + "'" + nearestOption(command, flag));
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

QString resolveModelArgument(const QString& value) {
    if (value.contains(QLatin1Char('/')) || QFileInfo::exists(value)) return value;
    const std::optional<QString> resources = resourcesFolder();
    const QString zoo = resources ? *resources + "/models/" + value : QString();
    return resources && QFileInfo(zoo).isDir() ? zoo : value;
}

QString CliArgs::model() const {
    const QString model = resolveModelArgument(required("--model"));
    if (!has("--revision")) return model;
    return QString::fromStdString(
        io::resolveModel(model.toStdString(), value("--revision").toStdString()).folder);
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
