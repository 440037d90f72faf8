#include "feature_analysis.h"

#include "ablation_effect.h"
#include "analysis/sae_edit.h"
#include "default_model.h"
#include "feature_labels.h"
#include "feature_scan.h"
#include "io/hub_cache.h"
#include "model_session.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace headlight::app {
namespace {

// Why a budget: the effect of every feature is d_sae products of length D over the vocabulary;
// a Gemma Scope SAE on a 256k vocabulary would take minutes, so there only the features shown
// are unembedded.
constexpr double kAllFeaturesBudget = 64e6; // d_sae × V
constexpr int kUnembedChunk = 128;          // decoder rows per unembedding call
constexpr int kShownPerToken = 5;

// The k largest (or smallest) entries of `row` [V], strongest first, ties by id.
std::vector<int32_t> extremes(const float* row, int64_t width, int k, bool largest) {
    std::vector<int32_t> ids(static_cast<std::size_t>(width));
    std::iota(ids.begin(), ids.end(), 0);
    const auto before = [&](int32_t a, int32_t b) {
        if (row[a] != row[b]) return largest ? row[a] > row[b] : row[a] < row[b];
        return a < b;
    };
    const std::size_t keep = std::min(ids.size(), std::size_t(k));
    std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(keep), ids.end(), before);
    ids.resize(keep);
    return ids;
}

bool onResidualStream(const analysis::SaeHook& hook) {
    return hook.point == analysis::SaeHook::Point::ResidPre ||
           hook.point == analysis::SaeHook::Point::ResidPost;
}

// The clean, spliced and zeroed passes' losses; a note instead where they cannot be had.
void measureLosses(const LoadedModel& model, const ModelInput& input,
                   const variants::VariantSpec& variant, const variants::Intervention& intervention,
                   const analysis::SaeHook& hook, const PassControl& control,
                   FeatureAnalysis& result) {
    if (!hasLanguageModelHead(*model.model)) {
        result.lossNote = QString::fromUtf8(noLanguageModelHeadReason());
        return;
    }
    if (!onResidualStream(hook)) {
        result.lossNote = QStringLiteral("the loss with the SAE spliced in is measured for SAEs "
                                         "on the residual stream only");
        return;
    }
    if (input.ids.size() < 2) {
        result.lossNote = QStringLiteral("a loss needs two tokens or more");
        return;
    }
    CaptureRequest logits;
    logits.probabilities = false;
    logits.logits = true;
    const auto lossWith = [&](const variants::ResidualEdit* edit) {
        variants::Intervention edited = intervention;
        if (edit) edited.edits.push_back(*edit);
        const Trace trace =
            model.model->forwardCached(*model.passCache, input, logits, variant, edited, control);
        return nextTokenLoss(trace.logits, input.ids);
    };
    const auto sae =
        std::shared_ptr<const analysis::SparseAutoencoder>(result.sae, &result.sae->sae.sae);
    const std::string& hookName = result.sae->sae.config.hookName;
    analysis::SaeFeatureEdits splice;
    splice.splice = analysis::SaeSplice::NoError;
    const variants::ResidualEdit spliced = analysis::saeResidualEdit(sae, splice, hook, hookName);
    variants::ResidualEdit zeroed;
    zeroed.layer = analysis::residualStreamOfHook(hook);
    zeroed.width = sae->dIn;
    zeroed.name = "the zero ablation at " + hookName;
    zeroed.rows = [](const Tensor& x) { return Tensor(x.shape()); };
    result.lossClean = lossWith(nullptr);
    result.lossSpliced = lossWith(&spliced);
    result.lossZeroed = lossWith(&zeroed);
}

// Every feature when that is cheap, else those among some token's strongest.
std::vector<int> featuresToUnembed(const FeatureAnalysis& result, int64_t vocabulary) {
    const int width = result.sae->sae.sae.dSae;
    std::vector<int> features;
    if (double(width) * double(vocabulary) <= kAllFeaturesBudget) {
        features.resize(std::size_t(width));
        std::iota(features.begin(), features.end(), 0);
        return features;
    }
    const Tensor& f = result.encoding.features;
    for (int64_t t = 0; t < f.dim(0); ++t)
        for (const FeatureActivation& a : strongestFeatures(f, t, kShownPerToken))
            features.push_back(a.feature);
    std::sort(features.begin(), features.end());
    features.erase(std::unique(features.begin(), features.end()), features.end());
    return features;
}

void measureDirectLogits(const LoadedModel& model, const analysis::SaeHook& hook,
                         FeatureAnalysis& result) {
    if (hook.point == analysis::SaeHook::Point::AttnZ ||
        hook.point == analysis::SaeHook::Point::MlpIn) {
        result.logitsNote = QStringLiteral("the SAE's decoder writes outside the residual stream, "
                                           "which the unembedding reads");
        return;
    }
    if (!model.model->hasLmHead()) {
        result.logitsNote = QString::fromStdString(model.model->lmHeadAbsence());
        return;
    }
    try {
        result.directLogits =
            directLogitsOf(*model.model, result.sae->sae.sae,
                           featuresToUnembed(result, model.model->spec().vocabSize));
    } catch (const ModelError& refused) {
        result.logitsNote = QString::fromUtf8(refused.what());
    }
}
} // namespace

std::shared_ptr<const AttachedSae> withFeatureNotes(const std::shared_ptr<const AttachedSae>& sae,
                                                    std::shared_ptr<const FeatureScan> scan,
                                                    std::shared_ptr<const FeatureLabels> labels) {
    auto noted = std::make_shared<AttachedSae>(*sae);
    if (scan) {
        if (int64_t(scan->fired.size()) != sae->sae.config.dSae)
            throw std::invalid_argument("the scan counts " + std::to_string(scan->fired.size()) +
                                        " features, the SAE " + sae->name().toStdString() +
                                        " has " + std::to_string(sae->sae.config.dSae));
        noted->scan = std::move(scan);
    }
    if (labels) noted->labels = std::move(labels);
    return noted;
}

std::shared_ptr<const AttachedSae> attachScenarioSae(const io::Scenario& scenario) {
    const auto named = [](const char* key, const std::string& value, const auto& read) {
        try {
            return read(QString::fromStdString(value));
        } catch (const std::exception& refused) {
            throw std::runtime_error(std::string(key) + " " + value + ": " + refused.what());
        }
    };
    std::shared_ptr<const AttachedSae> sae = named("sae", scenario.sae, attachSae);
    if (!scenario.saeScan.empty())
        sae = named("sae_scan", scenario.saeScan, [&](const QString& path) {
            return withFeatureNotes(sae, std::make_shared<const FeatureScan>(readFeatureScan(path)),
                                    nullptr);
        });
    if (!scenario.saeLabels.empty())
        sae = named("sae_labels", scenario.saeLabels, [&](const QString& path) {
            return withFeatureNotes(sae, nullptr,
                                    std::make_shared<const FeatureLabels>(readFeatureLabels(path)));
        });
    return sae;
}

analysis::SaeHook saeHookOn(const ModelSpec& spec, const io::SaeConfig& config) {
    const analysis::SaeHook hook =
        analysis::parseSaeHook(config.hookName, spec.layers, spec.sandwichNorms);
    const int width =
        hook.point == analysis::SaeHook::Point::AttnZ ? spec.heads * spec.headDim : spec.hidden;
    if (width != config.dIn)
        throw std::invalid_argument("the SAE reads " + std::to_string(config.dIn) +
                                    " values per token at " + config.hookName +
                                    " but the model gives " + std::to_string(width) + " there");
    return hook;
}

QString AttachedSae::name() const {
    return QFileInfo(QDir::cleanPath(resolved)).fileName();
}

std::shared_ptr<const AttachedSae> attachSae(const QString& folder) {
    auto attached = std::make_shared<AttachedSae>();
    attached->folder = folder;
    attached->resolved =
        QString::fromStdString(io::resolveCachedSubfolder(folder.toStdString()).folder);
    attached->sae = io::readSaeFolder(attached->resolved.toStdString());
    return attached;
}

QString noSaeNote() {
    return QStringLiteral("No SAE is attached: open one with File ▸ Open SAE… (Ctrl+Shift+E), "
                          "such as the zoo's for pre_ln and copy, to read its features here.");
}

QString zooSaeFor(const QString& modelFolder) {
    const std::optional<QString> resources = resourcesFolder();
    if (!resources) return {};
    const QFileInfo model(QDir::cleanPath(modelFolder));
    if (QFileInfo(model.absolutePath()) != QFileInfo(*resources + QStringLiteral("/models")))
        return {};
    const QString sae = *resources + QStringLiteral("/saes/") + model.fileName();
    return QFileInfo::exists(sae + QStringLiteral("/cfg.json")) ? QDir::cleanPath(sae) : QString();
}

std::vector<FeatureActivation> strongestFeatures(const Tensor& features, int64_t token, int k) {
    std::vector<FeatureActivation> firing;
    const int64_t width = features.dim(1);
    const float* row = features.data() + token * width;
    for (int64_t f = 0; f < width; ++f)
        if (row[f] != 0.0f) firing.push_back({int(f), row[f]});
    const auto stronger = [](const FeatureActivation& a, const FeatureActivation& b) {
        return a.activation != b.activation ? a.activation > b.activation : a.feature < b.feature;
    };
    const std::size_t keep = std::min(firing.size(), std::size_t(std::max(k, 0)));
    std::partial_sort(firing.begin(), firing.begin() + std::ptrdiff_t(keep), firing.end(),
                      stronger);
    firing.resize(keep);
    return firing;
}

int firingFeatures(const Tensor& features, int64_t token) {
    const int64_t width = features.dim(1);
    const float* row = features.data() + token * width;
    return int(std::count_if(row, row + width, [](float v) { return v != 0.0f; }));
}

std::map<int, DirectLogits> directLogitsOf(const TransformerModel& model,
                                           const analysis::SparseAutoencoder& sae,
                                           const std::vector<int>& features) {
    std::map<int, DirectLogits> effects;
    const int64_t width = sae.dIn;
    for (std::size_t start = 0; start < features.size(); start += kUnembedChunk) {
        const std::size_t count = std::min<std::size_t>(kUnembedChunk, features.size() - start);
        Tensor rows({int64_t(count), width});
        for (std::size_t i = 0; i < count; ++i)
            std::copy_n(sae.wDec.data() + int64_t(features[start + i]) * width, width,
                        rows.data() + int64_t(i) * width);
        const Tensor logits = model.unembedDirections(rows);
        const int64_t vocabulary = logits.dim(1);
        for (std::size_t i = 0; i < count; ++i) {
            const float* row = logits.data() + int64_t(i) * vocabulary;
            DirectLogits effect;
            effect.promoted = extremes(row, vocabulary, kDirectLogitTokens, true);
            effect.suppressed = extremes(row, vocabulary, kDirectLogitTokens, false);
            for (int32_t id : effect.promoted)
                effect.promotedLogits.push_back(row[id]);
            for (int32_t id : effect.suppressed)
                effect.suppressedLogits.push_back(row[id]);
            effects[features[start + i]] = std::move(effect);
        }
    }
    return effects;
}

double nextTokenLoss(const Tensor& logits, const std::vector<int32_t>& ids) {
    const int64_t vocabulary = logits.dim(1);
    double total = 0.0;
    const std::size_t predictions = ids.size() - 1;
    for (std::size_t t = 0; t < predictions; ++t) {
        const float* row = logits.data() + int64_t(t) * vocabulary;
        const double top = *std::max_element(row, row + vocabulary);
        double sum = 0.0;
        for (int64_t v = 0; v < vocabulary; ++v)
            sum += std::exp(double(row[v]) - top);
        total += top + std::log(sum) - double(row[ids[t + 1]]);
    }
    return total / double(predictions);
}

FeatureAnalysis analyseFeatures(const LoadedModel& model, const ModelInput& input,
                                const variants::VariantSpec& variant,
                                const variants::Intervention& intervention,
                                const std::shared_ptr<const AttachedSae>& sae,
                                const PassControl& control) {
    FeatureAnalysis result;
    result.sae = sae;
    const ModelSpec& spec = model.model->spec();
    const analysis::SaeHook hook = saeHookOn(spec, sae->sae.config);
    const Trace trace = model.model->forwardCached(*model.passCache, input,
                                                   analysis::captureForHook(hook, spec.layers),
                                                   variant, intervention, control);
    const Tensor activations = analysis::activationsAtHook(trace, hook, spec.layers);
    const auto start = std::chrono::steady_clock::now();
    result.encoding = analysis::encodeAndDecode(sae->sae.sae, activations);
    result.encodeMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!sae->sae.config.hookOutName.empty()) {
        // A transcoder reconstructs another hook's activations: its quality is against those.
        const analysis::SaeHook out =
            analysis::parseSaeHook(sae->sae.config.hookOutName, spec.layers, spec.sandwichNorms);
        const Trace target = model.model->forwardCached(*model.passCache, input,
                                                        analysis::captureForHook(out, spec.layers),
                                                        variant, intervention, control);
        result.encoding.target = analysis::activationsAtHook(target, out, spec.layers);
        result.lossNote = QStringLiteral("a transcoder replaces an MLP, not the residual stream");
    } else {
        measureLosses(model, input, variant, intervention, hook, control, result);
    }
    result.quality = analysis::reconstructionQuality(result.encoding);
    measureDirectLogits(model, hook, result);
    return result;
}
} // namespace headlight::app
