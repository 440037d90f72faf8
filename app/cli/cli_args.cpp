#include "cli_args.h"

namespace headlight::app {

CliArgs::CliArgs(const QStringList& args, const QStringList& switches, const QStringList& valued) {
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString& flag = args[i];
        if (switches.contains(flag)) {
            values_[flag].append(QString());
        } else if (valued.contains(flag)) {
            if (i + 1 >= args.size()) throw CliError(flag.toStdString() + " needs a value");
            values_[flag].append(args[++i]);
        } else {
            throw CliError("unknown argument '" + flag.toStdString() + "'");
        }
    }
}

QString CliArgs::value(const QString& flag) const {
    const QStringList list = values_.value(flag);
    return list.isEmpty() ? QString() : list.last();
}

QString CliArgs::required(const QString& flag) const {
    if (!has(flag)) throw CliError(flag.toStdString() + " is required");
    return value(flag);
}

int CliArgs::integer(const QString& flag, int fallback, int minimum, int maximum) const {
    if (!has(flag)) return fallback;
    bool ok = false;
    const int number = value(flag).toInt(&ok);
    if (!ok || number < minimum || number > maximum)
        throw CliError(flag.toStdString() + " must be an integer from " + std::to_string(minimum) + " to " +
                       std::to_string(maximum) + ", not '" + value(flag).toStdString() + "'");
    return number;
}

BackendKind CliArgs::backend() const {
    const auto kind = parseBackend(value("--backend").toStdString());
    if (!kind) throw CliError("--backend must be 'cpu' or 'vulkan', not '" + value("--backend").toStdString() + "'");
    return *kind;
}
} // namespace headlight::app
