#include "activation_patching.h"

#include "ablation_effect.h"

#include <QString>
#include <algorithm>

namespace headlight::app {
namespace {

// Where the difference is read: the last unpadded position (the next token after the text).
int64_t lastPosition(const ModelInput& input) {
    for (int64_t t = int64_t(input.ids.size()) - 1; t > 0; --t)
        if (input.attentionMask.empty() || input.attentionMask[std::size_t(t)]) return t;
    return 0;
}

double logitDifference(const Tensor& logits, int64_t position, int target, int foil) {
    const float* row = logits.data() + position * logits.dim(1);
    return double(row[target]) - double(row[foil]);
}

// The corrupted run's most likely token other than the target.
int topOtherThan(const Tensor& logits, int64_t position, int target) {
    const int64_t vocab = logits.dim(1);
    const float* row = logits.data() + position * vocab;
    int best = target == 0 ? 1 : 0;
    for (int64_t v = 0; v < vocab; ++v)
        if (int(v) != target && row[v] > row[best]) best = int(v);
    return best;
}

void checkSetup(const TransformerModel& model, const PatchSetup& setup) {
    if (!hasLanguageModelHead(model)) throw ModelError(noLanguageModelHeadReason());
    if (setup.clean.ids.size() != setup.corrupt.ids.size())
        throw ModelError("the clean text has " + std::to_string(setup.clean.ids.size()) +
                         " tokens and the corrupted text " +
                         std::to_string(setup.corrupt.ids.size()) +
                         "; patching needs the same length");
    const int vocab = model.spec().vocabSize;
    for (const int token : {setup.target, setup.foil.value_or(0)})
        if (token < 0 || token >= vocab)
            throw ModelError("token id " + std::to_string(token) + " is outside the vocabulary (" +
                             std::to_string(vocab) + ")");
    if (setup.foil == setup.target) throw ModelError("the target and the foil are the same token");
}

// The patch of cell (row, col) from the clean run's activations.
variants::Intervention cellPatch(const PatchSetup& setup, const Trace& clean, int layer, int col) {
    variants::Intervention patch;
    if (setup.grid == PatchGrid::LayersByPositions) {
        const Tensor& state = clean.hiddenStates[std::size_t(layer)];
        const int64_t hidden = state.dim(1);
        const float* row = state.data() + int64_t(col) * hidden;
        patch.residuals.push_back(
            {layer, col, Tensor({hidden}, std::vector<float>(row, row + hidden))});
        return patch;
    }
    const Tensor& outputs = clean.layers[std::size_t(layer)].headOutputs;
    const int64_t size = outputs.dim(1) * outputs.dim(2);
    const float* first = outputs.data() + int64_t(col) * size;
    patch.heads.push_back(
        {{layer, col, variants::AblationMode::Replace},
         Tensor({outputs.dim(1), outputs.dim(2)}, std::vector<float>(first, first + size))});
    return patch;
}
} // namespace

std::optional<PatchGrid> patchGridFromName(const QString& name) {
    QString n = name.trimmed().toLower();
    n.replace(QChar(0x00D7), 'x');
    if (n == "layersxpositions") return PatchGrid::LayersByPositions;
    if (n == "layersxheads") return PatchGrid::LayersByHeads;
    return std::nullopt;
}

std::optional<PatchResult> runPatching(const TransformerModel& model, const PatchSetup& setup,
                                       const PatchProgress& progress) {
    checkSetup(model, setup);
    CaptureRequest capture;
    capture.probabilities = false;
    capture.logits = true;
    CaptureRequest cleanCapture = capture;
    cleanCapture.hiddenStates = setup.grid == PatchGrid::LayersByPositions;
    cleanCapture.headOutputs = setup.grid == PatchGrid::LayersByHeads;
    const Trace clean = model.forward(setup.clean, cleanCapture, setup.variant);
    const Tensor corrupt = model.forward(setup.corrupt, capture, setup.variant).logits;

    PatchResult result;
    const int64_t position = lastPosition(setup.corrupt);
    result.grid = setup.grid;
    result.target = setup.target;
    result.foil = setup.foil.value_or(topOtherThan(corrupt, position, setup.target));
    result.cleanDifference = logitDifference(clean.logits, position, result.target, result.foil);
    result.corruptDifference = logitDifference(corrupt, position, result.target, result.foil);
    if (result.cleanDifference == result.corruptDifference)
        throw ModelError("the clean and corrupted texts give the same logit difference, so "
                         "nothing can be recovered");
    result.rows = model.spec().layers;
    result.cols = setup.grid == PatchGrid::LayersByPositions ? int(setup.clean.ids.size())
                                                             : model.spec().heads;
    const int total = result.rows * result.cols;
    for (int cell = 0; cell < total; ++cell) {
        const variants::Intervention patch =
            cellPatch(setup, clean, cell / result.cols, cell % result.cols);
        const Tensor logits = model.forward(setup.corrupt, capture, setup.variant, patch).logits;
        const double difference = logitDifference(logits, position, result.target, result.foil);
        result.difference.push_back(difference);
        result.recovered.push_back((difference - result.corruptDifference) /
                                   (result.cleanDifference - result.corruptDifference));
        if (progress && !progress(cell + 1, total)) return std::nullopt;
    }
    return result;
}
} // namespace headlight::app
