#include "cli.h"

#include "cli_args.h"
#include "cli_help.h"
#include "export/figure_export.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QTextStream>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace headlight::app {
namespace {

// Messages quote names taken from the files being read; a control character in one (a tensor
// named "a\nb") must not break the one-line contract that scripts and tests rely on.
std::string oneLine(const char* message) {
    std::string line;
    for (const char* at = message; *at; ++at) {
        const auto byte = static_cast<unsigned char>(*at);
        if (*at == '\n')
            line += "\\n";
        else if (*at == '\r')
            line += "\\r";
        else if (byte < 0x20 && *at != '\t') {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            line += escaped;
        } else
            line += *at;
    }
    return line;
}

// Qt's offscreen platform wants a runtime folder and warns on stderr when XDG_RUNTIME_DIR is
// unset (a CI job, ssh, cron), which breaks the one-line contract: give it a private one, as the
// XDG spec asks (owned by the user, mode 0700), or leave the variable unset if that fails.
void ensureRuntimeFolder() {
    if (!qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) return;
    const QByteArray folder =
        QDir::tempPath().toLocal8Bit() + "/headlight-runtime-" + QByteArray::number(getuid());
    if (mkdir(folder.constData(), 0700) != 0 && errno != EEXIST) return;
    struct stat info {};
    if (lstat(folder.constData(), &info) != 0 || !S_ISDIR(info.st_mode) ||
        info.st_uid != getuid() || (info.st_mode & 0777) != 0700)
        return;
    qputenv("XDG_RUNTIME_DIR", folder);
}

// Why: `export`, `figures`, `merge` and `reproduce` paint text, which needs a QGuiApplication; with
// no platform named they take the offscreen one, so figures render with no display. The other
// commands need no GUI.
std::unique_ptr<QCoreApplication> makeApplication(int& argc, char** argv) {
    const bool paints =
        argc >= 2 && (std::strcmp(argv[1], "export") == 0 || std::strcmp(argv[1], "figures") == 0 ||
                      std::strcmp(argv[1], "merge") == 0 || std::strcmp(argv[1], "patch") == 0 ||
                      std::strcmp(argv[1], "reproduce") == 0);
    if (!paints) return std::make_unique<QCoreApplication>(argc, argv);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    ensureRuntimeFolder();
    return std::make_unique<QGuiApplication>(argc, argv);
}

const CliCommand* findCommand(const QString& word) {
    const std::vector<CliCommand>& commands = cliCommands();
    const auto found =
        std::find_if(commands.begin(), commands.end(),
                     [&word](const CliCommand& command) { return command.name == word; });
    return found == commands.end() ? nullptr : &*found;
}

int runCommand(const CliCommand& command, const QStringList& words) {
    const QByteArray who = "headlight " + command.name.toUtf8();
    try {
        const CliArgs args(words, command);
        if (args.helpAsked()) {
            QTextStream(stdout) << commandHelp(command);
            return 0;
        }
        return command.run(args);
    } catch (const CliUsageError& error) {
        std::fprintf(stderr, "%s: %s\n%s", who.constData(), oneLine(error.what()).c_str(),
                     qPrintable(usageLines(command)));
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s: %s\n", who.constData(), oneLine(error.what()).c_str());
    }
    return 1;
}

// `headlight help [COMMAND | --man]`.
int runHelp(const QStringList& words) {
    QTextStream out(stdout);
    if (words.isEmpty()) {
        out << programHelp();
        return 0;
    }
    if (words.size() == 1 && words.first() == QLatin1String("--man")) {
        out << manPage();
        return 0;
    }
    const CliCommand* command = findCommand(words.first());
    if (words.size() == 1 && command) {
        out << commandHelp(*command);
        return 0;
    }
    const QString wrong = command ? words.at(1) : words.first();
    std::fprintf(stderr,
                 "headlight help: unknown %s '%s'\nusage: headlight help [COMMAND | --man]\n",
                 command ? "argument" : "command", oneLine(qPrintable(wrong)).c_str());
    return 1;
}
} // namespace

CliOption backendOption() {
    return {QStringLiteral("--backend"), QStringLiteral("cpu|vulkan"),
            QStringLiteral("force the compute backend (default: the faster one here)")};
}

CliOption vulkanDeviceOption() {
    return {QStringLiteral("--vulkan-device"), QStringLiteral("SEL"),
            QStringLiteral("the Vulkan device: its index or part of its name")};
}

CliOption dpiOption() {
    return {QStringLiteral("--dpi"), QStringLiteral("N"),
            QStringLiteral("PNG resolution in dots per inch, %1 to %2 (default %3)")
                .arg(render::kMinDpi)
                .arg(render::kMaxDpi)
                .arg(render::ExportOptions{}.dpi)};
}

CliOption revisionOption() {
    return {QStringLiteral("--revision"), QStringLiteral("NAME"),
            QStringLiteral("with a Hugging Face cache id or folder: the branch, tag or commit hash "
                           "to open, as the cache keeps it (Pythia's step1000; default: main)")};
}

const std::vector<CliCommand>& cliCommands() {
    static const std::vector<CliCommand> commands = {
        aboutCommand(),    convertCommand(), devicesCommand(),  exportCommand(),
        featuresCommand(), figuresCommand(), headsCommand(),    infoCommand(),
        inspectCommand(),  mergeCommand(),   patchCommand(),    reproduceCommand(),
        sinksCommand(),    steerCommand(),   tokenizeCommand(), variantsCommand()};
    return commands;
}

const std::vector<CliOption>& windowOptions() {
    static const std::vector<CliOption> options = {
        {QStringLiteral("--model"), QStringLiteral("DIR"),
         QStringLiteral("open this checkpoint folder, Hugging Face cache folder or cached "
                        "ORG/NAME id at start (default: the zoo's default model)")},
        revisionOption(),
        {QStringLiteral("--open"), QStringLiteral("FILE"),
         QStringLiteral("open this scene or lesson file at start (docs/scenes.md)")},
        {QStringLiteral("--present"), {}, QStringLiteral("start in presentation mode (F5)")},
        {QStringLiteral("--screenshot"), QStringLiteral("FILE"),
         QStringLiteral("save the window as a PNG once the first figure is shown, then quit "
                        "(exit 1 when no model opens)")},
        backendOption(),
        vulkanDeviceOption(),
    };
    return options;
}

bool isCliCommand(const QString& word) {
    if (word == "help" || word == "--help" || word == "-h" || word == "--version") return true;
    return findCommand(word) != nullptr;
}

namespace {
int editDistance(const QString& a, const QString& b) {
    std::vector<int> row(std::size_t(b.size()) + 1);
    for (std::size_t j = 0; j < row.size(); ++j)
        row[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        int diagonal = row[0];
        row[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int above = row[std::size_t(j)];
            row[std::size_t(j)] = std::min({above + 1, row[std::size_t(j - 1)] + 1,
                                            diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row.back();
}

QString suggestion(const QString& word, const QStringList& names) {
    const QString nearest = nearestName(word, names);
    return nearest.isEmpty() ? QString() : " (did you mean " + nearest + "?)";
}

// Qt's own options that QApplication takes with a value (`-platform offscreen`).
bool isQtValueOption(const QString& word) {
    static const QStringList options{"-platform",        "-platformpluginpath",
                                     "-platformtheme",   "-plugin",
                                     "-qwindowgeometry", "-qwindowtitle",
                                     "-qwindowicon",     "-style",
                                     "-stylesheet",      "-session",
                                     "-display",         "-geometry"};
    return options.contains(word);
}

QString windowOptionError(const QStringList& args, qsizetype& i) {
    const QString& word = args[i];
    const qsizetype equals = word.indexOf(QLatin1Char('='));
    const QString flag = equals < 0 ? word : word.left(equals);
    if (flag == "--help" || flag == "--help-all" || flag == "--version") return {};
    QStringList flags;
    for (const CliOption& option : windowOptions())
        flags << option.flag;
    const auto option = std::find_if(windowOptions().begin(), windowOptions().end(),
                                     [&flag](const CliOption& o) { return o.flag == flag; });
    if (option == windowOptions().end())
        return "unknown option '" + flag + "'" + suggestion(flag, flags);
    if (!option->takesValue() && equals >= 0) return flag + " takes no value";
    if (option->takesValue() && equals < 0 && ++i >= args.size()) return flag + " needs a value";
    return {};
}
} // namespace

QString nearestName(const QString& word, const QStringList& names) {
    QString nearest;
    int best = std::max(2, int(word.size()) / 3) + 1; // farther than this is not a typo
    for (const QString& name : names) {
        const int distance = editDistance(word, name);
        if (distance < best) best = distance, nearest = name;
    }
    return nearest;
}

QString windowArgumentsError(const QStringList& args) {
    bool fileGiven = false;
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString& word = args[i];
        if (word.startsWith(QLatin1String("--"))) {
            if (const QString error = windowOptionError(args, i); !error.isEmpty()) return error;
        } else if (word.startsWith(QLatin1Char('-'))) {
            if (word != "-h" && isQtValueOption(word)) ++i; // Qt's own, with its value
        } else if (fileGiven) {
            return "unexpected argument '" + word + "': the window opens one scene or lesson file";
        } else if (!QFileInfo::exists(word) && !word.contains(QLatin1Char('/')) &&
                   !word.contains(QLatin1Char('.'))) {
            // A word with no path or extension that names no file is a command, mistyped.
            QStringList names{"help"};
            for (const CliCommand& command : cliCommands())
                names << command.name;
            return "unknown command '" + word + "'" + suggestion(word, names) +
                   "; `headlight --help` lists the commands";
        } else {
            fileGiven = true;
        }
    }
    return {};
}

int runCli(int argc, char** argv) {
    const std::unique_ptr<QCoreApplication> app = makeApplication(argc, argv);
    QCoreApplication::setApplicationVersion(QStringLiteral(HEADLIGHT_VERSION));
    QStringList args = QCoreApplication::arguments().mid(1);
    const QString word = args.takeFirst();
    if (word == "--version") {
        QTextStream(stdout) << "headlight " << HEADLIGHT_VERSION << "\n";
        return 0;
    }
    if (word == "help" || word == "--help" || word == "-h") return runHelp(args);
    if (const CliCommand* command = findCommand(word)) return runCommand(*command, args);
    std::fprintf(stderr, "headlight: unknown command '%s'\n", oneLine(qPrintable(word)).c_str());
    return 1;
}
} // namespace headlight::app
