// `headlight about`: what Help ▸ About shows (app/session/about_info.h), for bug reports and for
// the package test, which checks that an installed binary finds its installed resources.
#include "about_info.h"
#include "cli.h"
#include "cli_args.h"

#include <QTextStream>

namespace headlight::app {
namespace {

int runAbout(const CliArgs& args) {
    const std::string selector = args.value("--vulkan-device").toStdString();
    const std::optional<BackendKind> forced =
        args.has("--backend") ? std::optional(args.backend()) : std::nullopt;
    QTextStream(stdout) << aboutLines(chooseBackend(forced, selector)).join(QLatin1Char('\n'))
                        << "\n";
    return 0;
}
} // namespace

CliCommand aboutCommand() {
    return {
        QStringLiteral("about"),
        QStringLiteral("print the version, git revision, Qt version, Vulkan device and driver, "
                       "and resources folder"),
        {QStringLiteral("[--backend cpu|vulkan] [--vulkan-device SEL]")},
        {},
        {backendOption(), vulkanDeviceOption()},
        {QStringLiteral("headlight about --backend cpu")},
        &runAbout,
    };
}
} // namespace headlight::app
