#include "cli.h"

#include <QCoreApplication>
#include <QDir>
#include <QGuiApplication>
#include <QTextStream>
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

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const QStringList&);
};

constexpr Command kCommands[] = {
    {"devices", "list Vulkan devices and the backend Headlight would choose", &runDevicesCommand},
    {"export",
     "render a view to PNG, SVG or PDF (or its data to CSV or safetensors), no display needed",
     &runExportCommand},
    {"figures",
     "the RealFormer paper's entropy and JSD figures for the zoo's Post-LN, Pre-LN and RealFormer "
     "models over a corpus",
     &runFiguresCommand},
    {"inspect", "run a checkpoint on text or ids; dump attentions and their analysis",
     &runInspectCommand},
    {"tokenize", "show the token ids and offsets a checkpoint's tokenizer gives for a text",
     &runTokenizeCommand},
    {"variants", "list the X-former variant options (--json for a machine-readable list)",
     &runVariantsCommand},
};

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

// Why: `export` and `figures` paint text, which needs a QGuiApplication; with no platform named
// they take the offscreen one, so figures render with no display. The other commands need no GUI.
std::unique_ptr<QCoreApplication> makeApplication(int& argc, char** argv) {
    const bool paints =
        argc >= 2 && (std::strcmp(argv[1], "export") == 0 || std::strcmp(argv[1], "figures") == 0);
    if (!paints) return std::make_unique<QCoreApplication>(argc, argv);
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    ensureRuntimeFolder();
    return std::make_unique<QGuiApplication>(argc, argv);
}

int printUsage() {
    QTextStream out(stdout);
    out << "usage: headlight [--backend cpu|vulkan] [--vulkan-device INDEX|NAME]   (opens the "
           "window)\n"
        << "       headlight COMMAND [options]\n\ncommands:\n";
    for (const Command& command : kCommands)
        out << "  " << command.name << "\t" << command.summary << "\n";
    return 0;
}
} // namespace

bool isCliCommand(const QString& word) {
    if (word == "help" || word == "--help" || word == "-h" || word == "--version") return true;
    for (const Command& command : kCommands)
        if (word == QLatin1String(command.name)) return true;
    return false;
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
    if (word == "help" || word == "--help" || word == "-h") return printUsage();
    for (const Command& command : kCommands) {
        if (word != QLatin1String(command.name)) continue;
        try {
            return command.run(args);
        } catch (const std::exception& error) {
            std::fprintf(stderr, "headlight %s: %s\n", command.name, oneLine(error.what()).c_str());
            return 1;
        }
    }
    return printUsage();
}
} // namespace headlight::app
