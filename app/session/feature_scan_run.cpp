// scanFeatures (feature_scan.h): the passes of a corpus scan, apart from the scan's bookkeeping
// and file, which the fuzz targets compile without the model.
#include "analysis/sae_hook.h"
#include "analysis/sparse_autoencoder.h"
#include "feature_analysis.h"
#include "feature_scan.h"
#include "text_input.h"

namespace headlight::app {

FeatureScan scanFeatures(const TransformerModel& model, const tokenize::Tokenizer* tokenizer,
                         const AttachedSae& sae, const FeatureScanRequest& request) {
    const ModelSpec& spec = model.spec();
    const io::SaeConfig& config = sae.sae.config;
    const analysis::SaeHook hook = saeHookOn(spec, config);
    QJsonObject settings = request.settings;
    settings["hook"] = QString::fromStdString(config.hookName);
    settings["shards"] = int(request.place.count);
    FeatureScan scan = emptyFeatureScan(config.dSae, request.contexts, settings);
    scan.place = request.place;
    const CaptureRequest capture = analysis::captureForHook(hook, spec.layers);
    const int64_t total = request.texts.size();
    for (int64_t i = 0; i < total; ++i) {
        const QString& text = request.texts[int(i)];
        const int64_t number = request.firstIndex + i;
        try {
            const PreparedText prepared = prepareText(tokenizer, text);
            if (prepared.input.ids.empty()) throw std::invalid_argument("it has no tokens");
            const Trace trace = model.forward(prepared.input, capture);
            const Tensor activations = analysis::activationsAtHook(trace, hook, spec.layers);
            addScannedText(scan, number,
                           analysis::encodeAndDecode(sae.sae.sae, activations).features, prepared,
                           text);
        } catch (const std::exception& refused) {
            scan.failed
                << QStringLiteral("text %1: %2")
                       .arg(number)
                       .arg(QString::fromUtf8(refused.what()).section(QLatin1Char('\n'), 0, 0));
        }
        if (request.progress && !request.progress(i + 1, total)) break;
    }
    return scan;
}
} // namespace headlight::app
