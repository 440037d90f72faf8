// Headlight: with a command word it is the CLI (no display needed); otherwise the window opens.
#include "classroom.h"
#include "cli.h"
#include "default_model.h"
#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

namespace {

int runGui(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Headlight");
    QApplication::setOrganizationName("Headlight");
    QApplication::setApplicationVersion(QStringLiteral(HEADLIGHT_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription("Runs Transformer variants and shows what happens inside them.");
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption backend("backend", "Force the compute backend: cpu or vulkan.", "name");
    const QCommandLineOption device("vulkan-device", "Vulkan device index or part of its name.", "device");
    const QCommandLineOption model(
        "model",
        "Open this checkpoint folder, Hugging Face cache folder or cached ORG/NAME id at start "
        "(default: the zoo's default model).",
        "folder|id");
    parser.addOption(backend);
    parser.addOption(device);
    const QCommandLineOption open(
        "open", "Open this scene or lesson file at start (docs/scenes.md).", "file");
    const QCommandLineOption present("present", "Start in presentation mode (F5).");
    parser.addOption(model);
    parser.addOption(open);
    parser.addOption(present);
    parser.process(app);

    headlight::app::LaunchOptions options;
    if (parser.isSet(backend)) {
        options.backend = headlight::parseBackend(parser.value(backend).toStdString());
        if (!options.backend) {
            std::fprintf(stderr, "headlight: --backend must be 'cpu' or 'vulkan'\n");
            return 2;
        }
    }
    options.vulkanDevice = parser.value(device).toStdString();
    headlight::app::MainWindow window(options);
    window.show();
    if (parser.isSet(open))
        window.classroom()->openFile(parser.value(open));
    else if (parser.isSet(model))
        window.openCheckpoint(parser.value(model));
    else if (const auto zoo = headlight::app::defaultModel()) {
        if (!zoo->text.isEmpty()) window.workspace()->setText(zoo->text);
        window.openCheckpoint(zoo->folder);
    }
    if (parser.isSet(present)) window.classroom()->present();
    return app.exec();
}
} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && headlight::app::isCliCommand(QString::fromLocal8Bit(argv[1])))
        return headlight::app::runCli(argc, argv);
    return runGui(argc, argv);
}
