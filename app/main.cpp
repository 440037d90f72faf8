// Headlight: with a command word it is the CLI (no display needed); otherwise the window opens.
#include "backend/backend_factory.h"
#include "classroom.h"
#include "cli.h"
#include "cli_args.h"
#include "default_model.h"
#include "io/hub_cache.h"
#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QHashFunctions>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace {

// The window's options as the CLI table declares them (`headlight --help` lists them too).
void addWindowOptions(QCommandLineParser& parser) {
    for (const headlight::app::CliOption& option : headlight::app::windowOptions())
        parser.addOption(
            QCommandLineOption(option.flag.mid(2), option.description, option.valueName));
}

// --screenshot FILE: the window as FILE once the first figure shows, then quit; exit 1 when the
// model fails to load. Why: a packaged or installed Headlight can be checked from a script (the
// package test), and documentation screenshots need no hand.
void quitAfterScreenshot(headlight::app::MainWindow& window, const QString& path) {
    const auto grabAndQuit = [&window, path] {
        // Why a short delay: the figure paints in the event loop turn after the result.
        QTimer::singleShot(200, &window, [&window, path] {
            const bool saved = window.grab().save(path, "png");
            if (!saved) std::fprintf(stderr, "headlight: cannot write %s\n", qPrintable(path));
            QApplication::exit(saved ? 0 : 1);
        });
    };
    QObject::connect(
        window.workspace(), &headlight::app::Workspace::resultShown, &window,
        [&window, grabAndQuit] {
            // A long pass's map is still being built: the figure shows when it is drawn.
            if (window.workspace()->drawing())
                QObject::connect(window.workspace(), &headlight::app::Workspace::refreshed, &window,
                                 grabAndQuit, Qt::SingleShotConnection);
            else
                grabAndQuit();
        },
        Qt::SingleShotConnection);
    QObject::connect(&window.session(), &headlight::app::ModelSession::failed, &window,
                     [](const QString& folder, const QString& reason) {
                         std::fprintf(stderr, "headlight: cannot open %s: %s\n", qPrintable(folder),
                                      qPrintable(reason.section('\n', 0, 0)));
                         QApplication::exit(1);
                     });
}

// --model (through resolveModelArgument) at --revision: the snapshot folder of that revision of a
// cached repository. Nothing when the revision is not there, after saying why on stderr.
std::optional<QString> modelToOpen(const QCommandLineParser& parser) {
    const QString model = headlight::app::resolveModelArgument(parser.value("model"));
    if (!parser.isSet("revision")) return model;
    try {
        return QString::fromStdString(
            headlight::io::resolveModel(model.toStdString(), parser.value("revision").toStdString())
                .folder);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "headlight: --revision: %s\n", error.what());
        return std::nullopt;
    }
}

// `code`, or the end of the process right here when a GPU batch was abandoned while it may still
// run: the driver's threads would crash in its libraries' exit-time destructors.
int exitCode(int code) {
    if (!headlight::gpuWorkAbandoned()) return code;
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
}

int runGui(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Headlight");
    QApplication::setOrganizationName("Headlight");
    QApplication::setApplicationVersion(QStringLiteral(HEADLIGHT_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Runs Transformer variants and shows what happens inside them.");
    parser.addHelpOption();
    parser.addVersionOption();
    addWindowOptions(parser);
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("a scene or lesson file to open (as --open)"),
                                 QStringLiteral("[FILE]"));
    parser.process(app);
    // What a file manager passes for a double-clicked scene or lesson (the .desktop entry's %f).
    const QString file =
        parser.isSet("open") ? parser.value("open") : parser.positionalArguments().value(0);

    headlight::app::LaunchOptions options;
    if (parser.isSet("backend")) {
        options.backend = headlight::parseBackend(parser.value("backend").toStdString());
        if (!options.backend) {
            std::fprintf(stderr, "headlight: --backend must be 'cpu' or 'vulkan'\n");
            return 2;
        }
    }
    options.vulkanDevice = parser.value("vulkan-device").toStdString();
    const std::optional<QString> model = modelToOpen(parser);
    if (!model) return 2;
    headlight::app::MainWindow window(options);
    auto* classroom = new headlight::app::Classroom(&window);
    window.show();
    if (parser.isSet("screenshot")) quitAfterScreenshot(window, parser.value("screenshot"));
    if (!file.isEmpty())
        classroom->openFile(file);
    else if (parser.isSet("model"))
        window.openCheckpoint(*model);
    else if (const auto zoo = headlight::app::defaultModel()) {
        if (!zoo->text.isEmpty()) window.workspace()->setText(zoo->text);
        window.openCheckpoint(zoo->folder);
    } else if (parser.isSet("screenshot")) {
        std::fprintf(stderr, "headlight: no model to open: the zoo's models/default.json was not "
                             "found (set HEADLIGHT_RESOURCES)\n");
        return 1;
    }
    if (parser.isSet("present")) classroom->present();
    return app.exec();
}
} // namespace

int main(int argc, char** argv) {
    // Why: Qt's PDF writer emits the fonts in QHash order, so with Qt's per-process random seed
    // the same figure gave a different PDF each time; `headlight reproduce` compares them.
    QHashSeed::setDeterministicGlobalSeed();
    if (argc > 1 && headlight::app::isCliCommand(QString::fromLocal8Bit(argv[1])))
        return exitCode(headlight::app::runCli(argc, argv));
    QStringList args;
    for (int i = 1; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    if (const QString error = headlight::app::windowArgumentsError(args); !error.isEmpty()) {
        std::fprintf(stderr, "headlight: %s\n", qPrintable(error));
        return 2;
    }
    return exitCode(runGui(argc, argv));
}
