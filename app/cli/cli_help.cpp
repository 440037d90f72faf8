#include "cli_help.h"

#include <QTextStream>
#include <algorithm>

namespace headlight::app {
namespace {

const CliOption kHelpOption{
    QStringLiteral("-h, --help"), {}, QStringLiteral("show this help and exit")};

QString optionLabel(const CliOption& option) {
    return option.takesValue() ? option.flag + QLatin1Char(' ') + option.valueName : option.flag;
}

// Two columns: labels padded to the widest, then descriptions.
void writeColumns(QTextStream& out, const std::vector<std::pair<QString, QString>>& rows) {
    qsizetype width = 0;
    for (const auto& [label, text] : rows)
        width = std::max(width, label.size());
    for (const auto& [label, text] : rows)
        out << "  " << label.leftJustified(width + 2) << text << "\n";
}

void writeOptions(QTextStream& out, const std::vector<CliOption>& options) {
    std::vector<std::pair<QString, QString>> rows;
    for (const CliOption& option : options)
        rows.emplace_back(optionLabel(option), option.description);
    writeColumns(out, rows);
}

// roff escapes: backslashes, hyphens (so that flags print as typed), and a leading dot or quote
// that would read as a request.
QString roff(QString text) {
    text.replace(QLatin1Char('\\'), QLatin1String("\\e"))
        .replace(QLatin1Char('-'), QLatin1String("\\-"));
    if (text.startsWith(QLatin1Char('.')) || text.startsWith(QLatin1Char('\'')))
        text.prepend(QLatin1String("\\&"));
    return text;
}

void writeManOptions(QTextStream& out, const std::vector<CliOption>& options) {
    for (const CliOption& option : options) {
        out << ".TP\n\\fB" << roff(option.flag) << "\\fR";
        if (option.takesValue()) out << " \\fI" << roff(option.valueName) << "\\fR";
        out << "\n" << roff(option.description) << "\n";
    }
}
} // namespace

QString usageLines(const CliCommand& command) {
    QString text;
    QTextStream out(&text);
    for (qsizetype i = 0; i < command.usage.size(); ++i)
        out << (i == 0 ? "usage: " : "       ") << "headlight " << command.name << " "
            << command.usage[i] << "\n";
    return text;
}

QString commandHelp(const CliCommand& command) {
    QString text;
    QTextStream out(&text);
    out << usageLines(command) << "\n" << command.summary << "\n";
    if (!command.operands.empty()) {
        out << "\narguments:\n";
        std::vector<std::pair<QString, QString>> rows;
        for (const CliOperand& operand : command.operands)
            rows.emplace_back(operand.name, operand.description);
        writeColumns(out, rows);
    }
    out << "\noptions:\n";
    std::vector<CliOption> options = command.options;
    options.push_back(kHelpOption);
    writeOptions(out, options);
    out << "\n" << (command.examples.size() == 1 ? "example:\n" : "examples:\n");
    for (const QString& example : command.examples)
        out << "  " << example << "\n";
    return text;
}

QString programHelp() {
    QString text;
    QTextStream out(&text);
    out << "usage: headlight [options]\n"
        << "       headlight COMMAND [options]\n"
        << "       headlight --version\n\n"
        << "Runs Transformer variants and shows what happens inside them. With no command the "
           "window opens.\n\nwindow options:\n";
    writeOptions(out, windowOptions());
    out << "\ncommands (headlight COMMAND --help lists a command's options):\n";
    std::vector<std::pair<QString, QString>> rows;
    for (const CliCommand& command : cliCommands())
        rows.emplace_back(command.name, command.summary);
    writeColumns(out, rows);
    return text;
}

QString manPage() {
    QString text;
    QTextStream out(&text);
    out << ".TH HEADLIGHT 1 \"\" \"Headlight " << HEADLIGHT_VERSION << "\"\n"
        << ".SH NAME\nheadlight \\- run Transformer variants and show what happens inside them\n"
        << ".SH SYNOPSIS\n\\fBheadlight\\fR [\\fIoptions\\fR]\n.br\n"
        << "\\fBheadlight\\fR \\fICOMMAND\\fR [\\fIoptions\\fR]\n"
        << ".SH DESCRIPTION\nWith no command the window opens.\n";
    writeManOptions(out, windowOptions());
    out << ".SH COMMANDS\n";
    for (const CliCommand& command : cliCommands()) {
        out << ".SS " << command.name << "\n" << roff(command.summary) << "\n";
        for (const QString& form : command.usage)
            out << ".PP\n\\fBheadlight " << command.name << "\\fR " << roff(form) << "\n";
        for (const CliOperand& operand : command.operands)
            out << ".TP\n\\fI" << roff(operand.name) << "\\fR\n"
                << roff(operand.description) << "\n";
        writeManOptions(out, command.options);
        for (const QString& example : command.examples)
            out << ".PP\nExample:\n.nf\n" << roff(example) << "\n.fi\n";
    }
    return text;
}
} // namespace headlight::app
