#pragma once
// The one table of the variant options Headlight implements. Everything that describes an option
// reads it: `headlight variants` (text, --json, --markdown), the table in docs/variants.md
// (generated, checked by tests/unit/test_catalogue), the variant panel's choices, labels,
// parameter spin boxes and tooltips (app/variant_options), and the compare dock's list.
//
// Each entry: item (the numbered options of docs/variants.md), family, JSON usage, parameters
// with their defaults, formula, citation, what the option needs from a checkpoint (its tag in
// docs/variants.md) and, for the options the panel offers, its short label and the parameter its
// spin box edits (range and default).
// Entries marked (zoo) are architecture keys: they select how a zoo checkpoint's trained weights
// are wired (docs/zoo-format.md) and are read from its config, not toggled on other checkpoints.

#include <vector>

namespace headlight::variants {

enum class Needs {
    Exact,       // INF-EXACT: reproduces the checkpoint's own computation
    Approximate, // INF-APPROX: approximates the trained attention without training
    Toggle,      // INF-TOGGLE: runs on any checkpoint but changes what it computes
    Weights,     // WEIGHTS: meaningful only with weights trained for it
};
const char* needsName(Needs needs);    // "exact", "approximate", "toggle", "weights"
const char* needsMeaning(Needs needs); // one line, as docs/variants.md explains the tag

// The one parameter of an option the variant panel edits with a spin box.
struct ParameterControl {
    const char* key = nullptr; // JSON key inside the option's object; null: no parameter
    const char* label = nullptr;
    double low = 0.0, high = 0.0, step = 1.0, fallback = 0.0;
    int decimals = 0; // 0: an integer
};

struct CatalogueEntry {
    int item;               // the option number of docs/variants.md
    const char* family;     // e.g. "sparse (position-based)"
    const char* name;       // display name
    const char* usage;      // the JSON that selects it, e.g. {"mask": {"preset": "longformer"}}
    const char* parameters; // "window = 2, dilation = 1, global = [0]"
    const char* formula;    // what it computes, as the code does (never empty)
    const char* citation;   // never empty
    Needs needs;
    const char* panelLabel = nullptr; // the variant panel's label; null: not offered there
    ParameterControl control = {};
};

const std::vector<CatalogueEntry>& catalogue();
} // namespace headlight::variants
