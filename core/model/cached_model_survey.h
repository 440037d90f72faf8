#pragma once
// What File ▸ Open from Hugging Face cache… shows about each cached model, read offline from its
// snapshot: the architecture config.json names, the stored dtypes, and whether Headlight can run
// it. "Can run" means the snapshot is intact (io::checkSnapshot), config.json names a supported
// architecture with sane sizes, and the weights open as safetensors; the tensors themselves are
// not loaded, so a survey of a cache of large models stays quick.

#include "io/hub_cache.h"

#include <string>

namespace headlight {

struct CachedModelSurvey {
    io::CachedModel model;
    std::string architecture; // "bert · BertForMaskedLM"; empty when config.json cannot be read
    std::string dtypes;       // the weights' stored dtypes, "F16" or "BF16, F32"; empty when none
    bool runnable = false;
    std::string problem; // why it cannot run, one line; empty when it can
};

CachedModelSurvey surveyCachedModel(const io::CachedModel& model);
} // namespace headlight
