// Headlight: with a command word it is the CLI (no display needed); otherwise the window opens.
#include "classroom.h"
#include "cli.h"
#include "default_model.h"
#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

namespace {

// The window's options as the CLI table declares them (`headlight --help` lists them too).
void addWindowOptions(QCommandLineParser& parser) {
    for (const headlight::app::CliOption& option : headlight::app::windowOptions())
        parser.addOption(
            QCommandLineOption(option.flag.mid(2), option.description, option.valueName));
}

int runGui(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Headlight");
    QApplication::setOrganizationName("Headlight");
    QApplication::setApplicationVersion(QStringLiteral(HEADLIGHT_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription("Runs Transformer variants and shows what happens inside them.");
    parser.addHelpOption();
    parser.addVersionOption();
    addWindowOptions(parser);
    parser.process(app);

    headlight::app::LaunchOptions options;
    if (parser.isSet("backend")) {
        options.backend = headlight::parseBackend(parser.value("backend").toStdString());
        if (!options.backend) {
            std::fprintf(stderr, "headlight: --backend must be 'cpu' or 'vulkan'\n");
            return 2;
        }
    }
    options.vulkanDevice = parser.value("vulkan-device").toStdString();
    headlight::app::MainWindow window(options);
    auto* classroom = new headlight::app::Classroom(&window);
    window.show();
    if (parser.isSet("open"))
        classroom->openFile(parser.value("open"));
    else if (parser.isSet("model"))
        window.openCheckpoint(parser.value("model"));
    else if (const auto zoo = headlight::app::defaultModel()) {
        if (!zoo->text.isEmpty()) window.workspace()->setText(zoo->text);
        window.openCheckpoint(zoo->folder);
    }
    if (parser.isSet("present")) classroom->present();
    return app.exec();
}
} // namespace

int main(int argc, char** argv) {
    if (argc > 1 && headlight::app::isCliCommand(QString::fromLocal8Bit(argv[1])))
        return headlight::app::runCli(argc, argv);
    return runGui(argc, argv);
}
