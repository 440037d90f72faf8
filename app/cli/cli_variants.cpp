// `headlight variants [--json | --markdown | --write-docs FILE]`: every variant option from the
// catalogue (variants/catalogue.h), with its catalogue item, family, how to select it in a spec,
// parameters and defaults, formula, citation, and what it needs from a checkpoint.
#include "cli.h"
#include "cli_args.h"
#include "variants/catalogue.h"
#include "variants/catalogue_markdown.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTextStream>

namespace headlight::app {
namespace {

QJsonObject entryJson(const variants::CatalogueEntry& e) {
    QJsonObject entry{{"item", e.item},
                      {"family", e.family},
                      {"name", e.name},
                      {"usage", e.usage},
                      {"parameters", e.parameters},
                      {"formula", e.formula},
                      {"citation", e.citation},
                      {"needs", variants::needsName(e.needs)}};
    if (e.control.key)
        entry.insert("control", QJsonObject{{"key", e.control.key},
                                            {"label", e.control.label},
                                            {"minimum", e.control.low},
                                            {"maximum", e.control.high},
                                            {"step", e.control.step},
                                            {"default", e.control.fallback},
                                            {"integer", e.control.decimals == 0}});
    return entry;
}

void printText(QTextStream& out) {
    for (const auto& e : variants::catalogue()) {
        out << "#" << e.item << "  " << e.name << "  [" << variants::needsName(e.needs) << "]\n"
            << "    family:  " << e.family << "\n    spec:    " << e.usage << "\n";
        if (*e.parameters) out << "    params:  " << e.parameters << "\n";
        out << "    formula: " << e.formula << "\n";
        out << "    cite:    " << e.citation << "\n";
    }
}

// Rewrites the generated table of a document (docs/variants.md) in place.
void writeDocs(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) throw CliError("cannot read " + path.toStdString());
    const std::optional<std::string> updated =
        variants::withCatalogueMarkdown(file.readAll().toStdString());
    if (!updated)
        throw CliError(path.toStdString() + " has no catalogue table markers (" +
                       variants::kCatalogueTableBegin + " ... " + variants::kCatalogueTableEnd +
                       ")");
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) ||
        out.write(updated->data(), qint64(updated->size())) != qint64(updated->size()) ||
        !out.commit())
        throw CliError("cannot write " + path.toStdString());
}

int runVariants(const CliArgs& args) {
    QTextStream out(stdout);
    if (args.has("--write-docs")) {
        writeDocs(args.value("--write-docs"));
        return 0;
    }
    if (args.has("--markdown")) {
        out << QString::fromStdString(variants::catalogueMarkdown()) << "\n";
        return 0;
    }
    if (args.has("--json")) {
        QJsonArray list;
        for (const auto& entry : variants::catalogue())
            list.append(entryJson(entry));
        out << QJsonDocument(list).toJson(QJsonDocument::Indented);
        return 0;
    }
    printText(out);
    return 0;
}
} // namespace

CliCommand variantsCommand() {
    return {
        QStringLiteral("variants"),
        QStringLiteral("list the X-former variant options (--json for a machine-readable list, "
                       "--markdown for the docs table)"),
        {QStringLiteral("[--json | --markdown | --write-docs FILE]")},
        {},
        {{"--json",
          {},
          "print every option as JSON: item, family, name, spec usage, parameters, formula, "
          "the panel's parameter control, citation and what it needs"},
         {"--markdown", {}, "print the catalogue as the Markdown table docs/variants.md carries"},
         {"--write-docs", "FILE",
          "rewrite the generated catalogue table of FILE (docs/variants.md) in place"}},
        {QStringLiteral("headlight variants --write-docs docs/variants.md")},
        &runVariants,
    };
}
} // namespace headlight::app
