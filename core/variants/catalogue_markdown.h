#pragma once
// The catalogue (variants/catalogue.h) as the Markdown table docs/variants.md carries between two
// marker comments. `headlight variants --markdown` prints it, `headlight variants --write-docs
// docs/variants.md` rewrites the section, and tests/unit/test_catalogue fails when the committed
// table differs from the generated one.

#include <optional>
#include <string>

namespace headlight::variants {

inline constexpr const char* kCatalogueTableBegin =
    "<!-- catalogue table: generated from core/variants/catalogue.cpp by `headlight variants "
    "--write-docs docs/variants.md`; edit the catalogue, not this table -->";
inline constexpr const char* kCatalogueTableEnd = "<!-- end of catalogue table -->";

// The table, one row per entry, with both markers around it.
std::string catalogueMarkdown();

// `document` with everything from the begin marker to the end marker replaced by
// catalogueMarkdown(); nullopt when either marker is missing.
std::optional<std::string> withCatalogueMarkdown(const std::string& document);
} // namespace headlight::variants
