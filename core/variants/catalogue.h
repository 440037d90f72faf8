#pragma once
// The variant options Headlight implements, as `headlight variants` lists them and the variant
// panel shows them: item (the numbered options of docs/variants.md), family, JSON usage, citation, parameters with their
// defaults, and what the option needs from a checkpoint (docs/variants.md). Entries marked (zoo)
// are architecture keys: they select how a zoo checkpoint's trained weights are wired
// (docs/zoo-format.md) and are read from its config, not toggled on other checkpoints.

#include <string>
#include <vector>

namespace headlight::variants {

enum class Needs {
    Exact,       // INF-EXACT: reproduces the checkpoint's own computation
    Approximate, // INF-APPROX: approximates the trained attention without training
    Toggle,      // INF-TOGGLE: runs on any checkpoint but changes what it computes
    Weights,     // WEIGHTS: meaningful only with weights trained for it
};
const char* needsName(Needs needs); // "exact", "approximate", "toggle", "weights"

struct CatalogueEntry {
    int item;              // the option number of docs/variants.md
    const char* family;    // e.g. "sparse (position-based)"
    const char* name;      // display name
    const char* usage;     // the JSON that selects it, e.g. {"mask": {"preset": "longformer"}}
    const char* parameters; // "window = 2, dilation = 1, global = [0]"
    const char* citation;
    Needs needs;
};

const std::vector<CatalogueEntry>& catalogue();
} // namespace headlight::variants
