#include "checkpoint_metrics.h"

#include "analysis/head_role_probes.h"
#include "text_input.h"

#include <algorithm>
#include <stdexcept>

namespace headlight::app {
namespace {

int probeLengthFor(const ModelSpec& spec, const ScrubProbes& probes) {
    if (spec.maxPositions <= 0) return probes.length;
    return std::max(1, std::min(probes.length, (spec.maxPositions - 1) / 2));
}

std::vector<double> textLosses(const LoadedModel& model, const QString& text) {
    const ModelSpec& spec = model.model->spec();
    if (!spec.causal || !model.model->hasLmHead())
        throw std::runtime_error(
            "the loss over training needs a causal language model with an "
            "LM head: " +
            (spec.causal ? model.model->lmHeadAbsence() : std::string("this model is an encoder")));
    const PreparedText prepared = prepareText(model.tokenizer.get(), text);
    CaptureRequest capture;
    capture.probabilities = false;
    capture.logits = true;
    const Trace trace = model.model->forward(prepared.input, capture);
    return analysis::tokenLosses(trace.logits, prepared.input.ids);
}
} // namespace

CheckpointMetrics measureCheckpoint(const LoadedModel& model, const QString& text,
                                    const ScrubProbes& probes) {
    const ModelSpec& spec = model.model->spec();
    CheckpointMetrics metrics;
    metrics.layers = spec.layers;
    metrics.heads = spec.heads;
    const std::vector<double> losses = textLosses(model, text);
    metrics.tokens = int(losses.size()) + 1;
    metrics.loss = analysis::meanLoss(losses);
    metrics.icl = analysis::iclPositions(metrics.tokens);
    metrics.iclScore = analysis::iclScore(losses, metrics.icl);
    metrics.probeLength = probeLengthFor(spec, probes);
    const auto ids = analysis::repeatedRandomProbes(
        uint64_t(probes.seed), probes.count, metrics.probeLength, spec.vocabSize, spec.padTokenId);
    metrics.roles = analysis::scoreProbeRoles(*model.model, ids, {}, {});
    return metrics;
}

std::vector<CheckpointMetrics> measureSeries(const io::CheckpointSeries& series,
                                             const QString& text, const BackendChoice& choice,
                                             const SeriesProgress& progress) {
    std::vector<CheckpointMetrics> all;
    const int total = int(series.checkpoints.size());
    for (int i = 0; i < total; ++i) {
        const io::SeriesCheckpoint& checkpoint = series.checkpoints[std::size_t(i)];
        const QString label = QString::fromStdString(checkpoint.label);
        if (!progress(i, total, label)) return all;
        try {
            const auto model =
                loadCheckpoint(QString::fromStdString(checkpoint.folder), choice, {});
            all.push_back(measureCheckpoint(*model, text));
        } catch (const std::exception& error) {
            throw std::runtime_error(checkpoint.label + ": " + error.what());
        }
    }
    progress(total, total, {});
    return all;
}

RoleLine strongestHeadLine(const std::vector<CheckpointMetrics>& metrics,
                           double analysis::HeadRoleScores::*role) {
    RoleLine line;
    double best = -1.0;
    for (const CheckpointMetrics& checkpoint : metrics)
        for (std::size_t h = 0; h < checkpoint.roles.size(); ++h)
            if (checkpoint.roles[h].*role > best) {
                best = checkpoint.roles[h].*role;
                line.head = int(h);
            }
    for (const CheckpointMetrics& checkpoint : metrics)
        line.scores.push_back(std::size_t(line.head) < checkpoint.roles.size()
                                  ? checkpoint.roles[std::size_t(line.head)].*role
                                  : 0.0);
    return line;
}
} // namespace headlight::app
