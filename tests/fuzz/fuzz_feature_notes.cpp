// libFuzzer target: what the feature page reads beside an SAE, as scan.json NUL
// batch-0.jsonl.gz (the gzip part last, since it may hold NUL bytes; fuzz_support.h). The scan
// goes through readFeatureScan, which must refuse in FeatureScanError or give a scan whose
// counts fit d_sae, whose contexts are at most `contexts` per feature, ordered, and positive,
// and which writes and reads back unchanged. The explanations go through readFeatureLabels,
// which must refuse in FeatureLabelsError or keep at most one description per line read.
#include "feature_labels.h"
#include "feature_scan.h"
#include "fuzz_support.h"

using namespace headlight;

namespace {

void checkScan(const app::FeatureScan& scan) {
    HEADLIGHT_FUZZ_CHECK(scan.fired.size() == scan.top.size());
    HEADLIGHT_FUZZ_CHECK(scan.place.index < scan.place.count);
    for (std::size_t f = 0; f < scan.top.size(); ++f) {
        HEADLIGHT_FUZZ_CHECK(scan.fired[f] >= 0 && scan.fired[f] <= scan.tokens);
        HEADLIGHT_FUZZ_CHECK(int(scan.top[f].size()) <= scan.contexts());
        for (std::size_t i = 0; i < scan.top[f].size(); ++i) {
            HEADLIGHT_FUZZ_CHECK(scan.top[f][i].activation > 0.0f);
            if (i > 0)
                HEADLIGHT_FUZZ_CHECK(scan.top[f][i - 1].activation >= scan.top[f][i].activation);
        }
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    static const fuzz::ScratchFolder folder;
    const std::vector<std::string_view> parts = fuzz::splitAtNul(data, size, 2);
    folder.write("scan.json", parts[0]);
    try {
        const app::FeatureScan scan = app::readFeatureScan(folder.filePath("scan.json"));
        checkScan(scan);
        app::writeFeatureScan(folder.filePath("again.json"), scan);
        const app::FeatureScan again = app::readFeatureScan(folder.filePath("again.json"));
        HEADLIGHT_FUZZ_CHECK(again.fired == scan.fired && again.tokens == scan.tokens &&
                             again.settings == scan.settings);
    } catch (const app::FeatureScanError&) {
    }
    if (parts.size() < 2) return 0;
    folder.write("batch-0.jsonl.gz", parts[1]);
    try {
        const app::FeatureLabels labels =
            app::readFeatureLabels(folder.filePath("batch-0.jsonl.gz"));
        HEADLIGHT_FUZZ_CHECK(int(labels.descriptions.size()) <= labels.explanations);
    } catch (const app::FeatureLabelsError&) {
    }
    return 0;
}
