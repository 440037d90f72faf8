#include "variants/catalogue_markdown.h"

#include "variants/catalogue.h"

#include <cstring>

namespace headlight::variants {
namespace {

// A table cell: a `|` would end the cell, so it is escaped (GitHub Markdown reads `\|` as `|`,
// also inside code spans).
std::string cell(const char* text) {
    std::string escaped;
    for (const char* at = text; *at; ++at) {
        if (*at == '|') escaped += '\\';
        escaped += *at;
    }
    return escaped;
}

std::string row(const CatalogueEntry& entry) {
    return "| " + std::to_string(entry.item) + " | " + cell(entry.name) + " | " +
           cell(entry.family) + " | " + needsName(entry.needs) + " | `" + cell(entry.usage) +
           "` | " + cell(entry.parameters) + " | " + cell(entry.formula) + " | " +
           cell(entry.citation) + " |\n";
}
} // namespace

std::string catalogueMarkdown() {
    std::string table = std::string(kCatalogueTableBegin) + "\n\n" +
                        "| item | option | family | needs | spec | parameters | formula | "
                        "citation |\n|---|---|---|---|---|---|---|---|\n";
    for (const CatalogueEntry& entry : catalogue())
        table += row(entry);
    return table + "\n" + kCatalogueTableEnd;
}

std::optional<std::string> withCatalogueMarkdown(const std::string& document) {
    const std::size_t begin = document.find(kCatalogueTableBegin);
    if (begin == std::string::npos) return std::nullopt;
    const std::size_t end = document.find(kCatalogueTableEnd, begin);
    if (end == std::string::npos) return std::nullopt;
    return document.substr(0, begin) + catalogueMarkdown() +
           document.substr(end + std::strlen(kCatalogueTableEnd));
}
} // namespace headlight::variants
