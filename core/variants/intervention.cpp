#include "variants/intervention.h"

#include "variants/variant_spec.h"

#include <QString>
#include <QStringList>

namespace headlight::variants {
namespace {

constexpr struct {
    AblationMode mode;
    const char* name;
} kModes[] = {{AblationMode::Zero, "zero"},
              {AblationMode::Mean, "mean"},
              {AblationMode::Replace, "replace"},
              {AblationMode::CorpusMean, "mean-corpus"}};

// A [T, T] matrix whose every row holds 1/|V| at the valid positions: times o_h [T, d] it gives
// the mean output in every row.
Tensor meanMatrix(std::span<const uint8_t> valid) {
    const int64_t tokens = int64_t(valid.size());
    int64_t count = 0;
    for (uint8_t v : valid)
        count += v ? 1 : 0;
    Tensor mean({1, tokens, tokens});
    if (count == 0) return mean;
    for (int64_t row = 0; row < tokens; ++row)
        for (int64_t col = 0; col < tokens; ++col)
            if (valid[std::size_t(col)]) mean.data()[row * tokens + col] = 1.0f / float(count);
    return mean;
}

// The new output of one head [T, d] given its current one.
DeviceTensor editedHead(Backend& backend, const HeadAblation& ablation, const DeviceTensor& current,
                        std::span<const uint8_t> valid) {
    switch (ablation.spec.mode) {
    case AblationMode::Zero:
        return backend.upload(Tensor(current.shape()));
    case AblationMode::Mean: {
        DeviceTensor mean = backend.allocate(current.shape());
        backend.matmul(backend.upload(meanMatrix(valid)), current, false, 1.0f, mean);
        return mean;
    }
    case AblationMode::CorpusMean: {
        // The corpus mean [d] in every row: ones [T, 1] times the mean [1, d].
        Tensor mean = ablation.replacement;
        mean.reshape({1, 1, current.dim(1)});
        DeviceTensor rows = backend.allocate(current.shape());
        backend.matmul(
            backend.upload(Tensor({1, current.dim(0), 1},
                                  std::vector<float>(std::size_t(current.dim(0)), 1.0f))),
            backend.upload(mean), false, 1.0f, rows);
        return rows;
    }
    case AblationMode::Replace:
        break;
    }
    Tensor replacement = ablation.replacement;
    replacement.reshape(current.shape());
    return backend.upload(replacement);
}
} // namespace

const char* ablationModeName(AblationMode mode) {
    for (const auto& m : kModes)
        if (m.mode == mode) return m.name;
    return "zero";
}

std::optional<AblationMode> ablationModeFromName(const std::string& name) {
    for (const auto& m : kModes)
        if (name == m.name) return m.mode;
    return std::nullopt;
}

std::vector<HeadAblationSpec> parseAblations(const std::string& text) {
    std::vector<HeadAblationSpec> specs;
    for (const QString& entry : QString::fromStdString(text).split(',', Qt::SkipEmptyParts)) {
        const QString trimmed = entry.trimmed();
        const QStringList modeSplit = trimmed.split(':');
        const QStringList head = modeSplit.front().split('.');
        bool layerOk = false, headOk = false;
        HeadAblationSpec spec;
        if (head.size() == 2) {
            spec.layer = head[0].toInt(&layerOk);
            spec.head = head[1].toInt(&headOk);
        }
        const std::optional<AblationMode> mode =
            modeSplit.size() == 1 ? AblationMode::Zero
                                  : ablationModeFromName(modeSplit.back().toStdString());
        if (!layerOk || !headOk || modeSplit.size() > 2 || !mode)
            throw VariantError("'" + trimmed.toStdString() +
                               "' is not a head ablation: write LAYER.HEAD or "
                               "LAYER.HEAD:zero|mean|mean-corpus|replace (from 0), e.g. 0.3:mean");
        spec.mode = *mode;
        specs.push_back(spec);
    }
    if (specs.empty())
        throw VariantError(
            "no head to ablate: write LAYER.HEAD[:zero|mean|mean-corpus|replace],...");
    return specs;
}

std::string ablationText(const std::vector<HeadAblationSpec>& ablations) {
    std::string text;
    for (const HeadAblationSpec& a : ablations) {
        if (!text.empty()) text += ",";
        text +=
            std::to_string(a.layer) + "." + std::to_string(a.head) + ":" + ablationModeName(a.mode);
    }
    return text;
}

Intervention interventionOf(const std::vector<HeadAblationSpec>& specs) {
    Intervention intervention;
    for (const HeadAblationSpec& spec : specs) {
        if (spec.mode == AblationMode::Replace || spec.mode == AblationMode::CorpusMean)
            throw VariantError("head " + std::to_string(spec.layer) + "." +
                               std::to_string(spec.head) +
                               (spec.mode == AblationMode::Replace
                                    ? ": replace needs the source text's head outputs"
                                    : ": mean-corpus needs the head means of a corpus"));
        intervention.heads.push_back({spec, {}});
    }
    return intervention;
}

void ablateHeads(Backend& backend, const Intervention& intervention, int layer, int heads,
                 std::span<const uint8_t> valid, DeviceTensor& context) {
    const int64_t tokens = context.dim(0), d = context.dim(1) / heads;
    DeviceTensor split;
    for (const HeadAblation& ablation : intervention.heads) {
        if (ablation.spec.layer != layer) continue;
        if (!split.valid()) {
            split = backend.allocate({heads, tokens, d});
            backend.splitHeads(context, heads, split);
        }
        const int64_t first = int64_t(ablation.spec.head) * tokens;
        DeviceTensor current = backend.allocate({tokens, d});
        backend.copyRows(split, first, tokens, current, 0);
        backend.copyRows(editedHead(backend, ablation, current, valid), 0, tokens, split, first);
    }
    if (split.valid()) backend.mergeHeads(split, context);
}

DeviceTensor patchResidual(Backend& backend, const Intervention& intervention, int layer,
                           const DeviceTensor& x) {
    DeviceTensor patched;
    for (const ResidualPatch& patch : intervention.residuals) {
        if (patch.layer != layer) continue;
        if (!patched.valid()) {
            patched = backend.allocate(x.shape());
            backend.copyRows(x, 0, x.dim(0), patched, 0);
        }
        Tensor row = patch.row;
        row.reshape({1, x.dim(1)});
        backend.copyRows(backend.upload(row), 0, 1, patched, patch.position);
    }
    return patched.valid() ? patched : x;
}

DeviceTensor editResidual(Backend& backend, const Intervention& intervention, int layer,
                          const DeviceTensor& x) {
    std::optional<Tensor> rows;
    for (const ResidualEdit& edit : intervention.edits) {
        if (edit.layer != layer) continue;
        if (!rows) rows = backend.download(x);
        rows = edit.rows(*rows);
    }
    return rows ? backend.upload(*rows) : x;
}
} // namespace headlight::variants
