#pragma once
// The view ids and colour maps the application gives the scene parsers
// (app/figures/scene_files.cpp); written out here because the fuzzed library has no widgets and no
// figure code.
#include "io/scene_file.h"

namespace headlight::fuzz {
inline const io::SceneVocabulary& sceneVocabulary() {
    static const io::SceneVocabulary vocabulary{
        {"heatmap", "model-grid", "token-lines", "entropy-violins", "jsd-violins",
         "head-jsd-matrix", "rollout", "difference", "sparsity", "positions", "early-exit",
         "lsh-buckets", "moe-routing", "act-ponder", "logit-lens", "variant-effect"},
        {"viridis", "cividis"}};
    return vocabulary;
}
} // namespace headlight::fuzz
