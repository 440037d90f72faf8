// `headlight variants`: every variant option, with its catalogue item, family, how to
// select it in a spec, parameters and defaults, citation, and what it needs from a checkpoint.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include "cli.h"
#include "cli_args.h"
#include "variants/catalogue.h"

namespace headlight::app {
namespace {

QJsonObject entryJson(const variants::CatalogueEntry& e) {
    return {{"item", e.item},
            {"family", e.family},
            {"name", e.name},
            {"usage", e.usage},
            {"parameters", e.parameters},
            {"citation", e.citation},
            {"needs", variants::needsName(e.needs)}};
}

int runVariants(const CliArgs& args) {
    QTextStream out(stdout);
    if (args.has("--json")) {
        QJsonArray list;
        for (const auto& entry : variants::catalogue()) list.append(entryJson(entry));
        out << QJsonDocument(list).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto& e : variants::catalogue()) {
        out << "#" << e.item << "  " << e.name << "  [" << variants::needsName(e.needs) << "]\n"
            << "    family: " << e.family << "\n    spec:   " << e.usage << "\n";
        if (*e.parameters) out << "    params: " << e.parameters << "\n";
        out << "    cite:   " << e.citation << "\n";
    }
    return 0;
}
} // namespace

CliCommand variantsCommand() {
    return {
        QStringLiteral("variants"),
        QStringLiteral("list the X-former variant options (--json for a machine-readable list)"),
        {QStringLiteral("[--json]")},
        {},
        {{"--json",
          {},
          "print every option as JSON: item, family, name, spec usage, parameters, "
          "citation and what it needs"}},
        {QStringLiteral("headlight variants --json")},
        &runVariants,
    };
}
} // namespace headlight::app
