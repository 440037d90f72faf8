#include "variant_options.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace headlight::app {
namespace {

using variants::CatalogueEntry;
using variants::Needs;

OptionParameter integer(const char* key, const QString& label, int low, int high, int fallback,
                        int step = 1) {
    return {key, label, double(low), double(high), double(step), double(fallback), 0};
}

OptionParameter real(const char* key, const QString& label, double low, double high, double step,
                     double fallback) {
    return {key, label, low, high, step, fallback, 2};
}

OptionGroup kernelGroup() {
    const QString usage = QStringLiteral(R"({"attention": {"kernel": "%1"}})");
    const auto choice = [&](const char* id, const char* label, const char* formula,
                            OptionParameter parameter = {}) {
        return OptionChoice{id, label, usage.arg(id), formula, parameter};
    };
    return {
        QStringLiteral("Attention kernel"),
        GroupStyle::Combo,
        QStringLiteral("attention"),
        QStringLiteral("kernel"),
        {{"softmax", "Exact softmax (the checkpoint's own)", "", "softmax(QKᵀ/√d + bias)·V"},
         choice("lsh", "Reformer LSH",
                "h(x) = argmax([xR; −xR]); attend within a bucket, in chunks of the sorted order",
                integer("buckets", "Buckets", 2, 64, 8, 2)),
         choice("favor", "Performer FAVOR+",
                "softmax(QKᵀ)V ≈ φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1), φ(x) = exp(ωᵀx − ‖x‖²/2)/√m",
                integer("features", "Features m", 4, 1024, 64)),
         choice("rfa", "Random Fourier features (RFA)",
                "φ(x) = [sin(ωᵀx), cos(ωᵀx)]·exp(‖x‖²/2)/√m",
                integer("features", "Features m", 4, 1024, 64)),
         choice("linear_elu", "Linear Transformer (elu + 1)",
                "φ(x) = elu(x) + 1; out = φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1)"),
         choice("probsparse", "Informer ProbSparse",
                "M(q, K) = max_j s_ij − mean_j s_ij; the top u = c·ln T queries attend, the rest "
                "output mean(V)",
                real("factor", "Factor c", 0.5, 50.0, 0.5, 5.0)),
         choice("linformer", "Linformer", "softmax(Q(EK)ᵀ/√d)·(FV), E, F pool T keys to k rows",
                integer("projected", "Rows k", 1, 512, 32)),
         choice("memory_compressed", "Memory-compressed",
                "K and V mean-pooled with stride k before the softmax",
                integer("projected", "Stride k", 1, 512, 32)),
         choice("nystrom", "Nyströmformer",
                "softmax(QK̃ᵀ)·pinv(softmax(Q̃K̃ᵀ))·softmax(Q̃Kᵀ), landmarks = segment means",
                integer("landmarks", "Landmarks", 1, 256, 16))}};
}

OptionGroup maskGroup() {
    const QString usage = QStringLiteral(R"({"mask": {"preset": "%1"}})");
    const auto choice = [&](const char* id, const char* label, const char* formula,
                            OptionParameter parameter = {}) {
        return OptionChoice{id, label, usage.arg(id), formula, parameter};
    };
    return {
        QStringLiteral("Sparse mask"),
        GroupStyle::Combo,
        QStringLiteral("mask"),
        QStringLiteral("preset"),
        {{"", "None (every key)", "", ""},
         choice("star", "Star-Transformer", "|i − j| ≤ 1, and token 0 sees and is seen by all"),
         choice("longformer", "Longformer", "|i − j| ≤ w (dilated by d), plus global tokens",
                integer("window", "Window w", 0, 64, 2)),
         choice("bigbird", "BigBird", "|⌊i/b⌋ − ⌊j/b⌋| ≤ 1, r random blocks, global tokens",
                integer("block", "Block b", 1, 64, 4)),
         choice("sparse_strided", "Sparse Transformer (strided)", "|i − j| < l, or l divides i − j",
                integer("stride", "Stride l", 1, 64, 4)),
         choice("sparse_fixed", "Sparse Transformer (fixed)", "⌊i/l⌋ = ⌊j/l⌋, or j mod l ≥ l − c",
                integer("block", "Block l", 1, 64, 4)),
         choice("image_local", "Image Transformer (1D local)",
                "j in i's block of b, or the m tokens before it",
                integer("block", "Block b", 1, 64, 4)),
         choice("blockwise", "Blockwise", "⌊i/b⌋ = ⌊j/b⌋", integer("block", "Block b", 1, 64, 4)),
         choice("multiscale", "Multi-scale spans",
                "|i − j| ≤ w_h, w = [1, 2, 4, 8] cycling over heads")}};
}

OptionGroup priorGroup() {
    const QString usage = QStringLiteral(R"({"prior": {"kind": "%1"}})");
    const auto choice = [&](const char* id, const char* label, const char* formula,
                            OptionParameter parameter = {}) {
        return OptionChoice{id, label, usage.arg(id), formula, parameter};
    };
    return {
        QStringLiteral("Prior between layers"),
        GroupStyle::Radios,
        QStringLiteral("prior"),
        QStringLiteral("kind"),
        {{"", "None", "", ""},
         choice("residual", "RealFormer residual", "S_l = QKᵀ/√d + S_{l−1}"),
         choice("residual_mean", "RealFormer running mean", "S_l = (raw_l + l·S_{l−1}) / (l + 1)"),
         choice("share", "Lazyformer sharing", "A_l = A of the first layer of its group of k",
                integer("every", "Group k", 1, 48, 2)),
         choice("gaussian", "Gaussian local prior", "S_ij += −(i − j)² / (2σ²)",
                real("sigma", "σ (tokens)", 0.5, 256.0, 0.5, 4.0))}};
}

OptionGroup positionGroup() {
    const QString usage = QStringLiteral(R"({"position": "%1"})");
    const auto choice = [&](const char* id, const char* label, const char* formula) {
        return OptionChoice{id, label, usage.arg(id), formula, {}};
    };
    return {QStringLiteral("Position encoding"),
            GroupStyle::Radios,
            QStringLiteral("position"),
            QString(),
            {{"checkpoint", "The checkpoint's own", "", ""},
             choice("none", "None (NoPE)", "no position signal: tokens form a set"),
             choice("sinusoidal", "Sinusoidal",
                    "PE[t, 2i] = sin(t/10000^(2i/D)), PE[t, 2i+1] = cos(…)"),
             choice("alibi", "ALiBi", "S_ij += −m_h·|i − j|, m_h = 2^(−8h/H)")}};
}

OptionGroup earlyExitGroup() {
    const QString usage = QStringLiteral(R"({"early_exit": {"criterion": "%1"}})");
    const auto choice = [&](const char* id, const char* label, const char* formula,
                            OptionParameter parameter) {
        return OptionChoice{id, label, usage.arg(id), formula, parameter};
    };
    return {
        QStringLiteral("Early exit"),
        GroupStyle::Combo,
        QStringLiteral("early_exit"),
        QStringLiteral("criterion"),
        {{"", "None (every layer runs)", "", ""},
         choice("entropy", "Entropy (DeeBERT)",
                "exit at the first layer with H(softmax(W_E·h_l)) < τ",
                real("threshold", "τ (nats)", 0.0, 20.0, 0.1, 2.0)),
         choice("patience", "Patience (PABEE)",
                "exit once argmax(W_E·h_l) is unchanged for p layers",
                integer("patience", "Patience p", 1, 48, 2)),
         choice("softmax_response", "Softmax response (CALM)", "exit when max softmax(W_E·h_l) ≥ τ",
                real("threshold", "τ (probability)", 0.0, 1.0, 0.05, 0.9)),
         choice("saturation", "Saturation (CALM)", "exit when cos(h_l, h_{l−1}) ≥ τ",
                real("threshold", "τ (cosine)", 0.0, 1.0, 0.01, 0.99))}};
}

OptionGroup toggle(const char* title, const char* key, const char* id, const char* label,
                   const char* usage, const char* formula, OptionParameter parameter = {}) {
    return {title,
            GroupStyle::Toggle,
            key,
            QString(),
            {{"", "", "", ""}, {id, label, usage, formula, parameter}}};
}

// Item 16 is not in the engine's catalogue; the panel offers it with the same fields.
const std::vector<CatalogueEntry>& earlyExitEntries() {
    static const std::vector<CatalogueEntry> entries{
        {16, "early exit", "Early exit by entropy", R"({"early_exit": {"criterion": "entropy"}})",
         "threshold (nats)", "Xin et al. 2020 (DeeBERT)", Needs::Approximate},
        {16, "early exit", "Early exit by patience", R"({"early_exit": {"criterion": "patience"}})",
         "patience = 2", "Zhou et al. 2020 (PABEE)", Needs::Approximate},
        {16, "early exit", "Early exit by softmax response",
         R"({"early_exit": {"criterion": "softmax_response"}})", "threshold (top-1 probability)",
         "Schuster et al. 2022 (CALM)", Needs::Approximate},
        {16, "early exit", "Early exit by state saturation",
         R"({"early_exit": {"criterion": "saturation"}})", "threshold (cosine)",
         "Schuster et al. 2022 (CALM)", Needs::Approximate},
    };
    return entries;
}

QString needsMeaning(Needs needs) {
    switch (needs) {
    case Needs::Exact:
        return QStringLiteral("reproduces the checkpoint's own computation");
    case Needs::Approximate:
        return QStringLiteral("approximates the attention the checkpoint was trained with, "
                              "without training");
    case Needs::Toggle:
        return QStringLiteral("runs on any checkpoint, but changes what it computes");
    case Needs::Weights:
        return QStringLiteral("meaningful only with weights trained for it; here it runs as a "
                              "toggle");
    }
    return {};
}

QJsonValue parameterValue(const OptionParameter& parameter, double value) {
    if (parameter.decimals == 0) return QJsonValue(qint64(std::llround(value)));
    return QJsonValue(value);
}
} // namespace

const std::vector<OptionGroup>& optionGroups() {
    static const std::vector<OptionGroup> groups{
        kernelGroup(),
        maskGroup(),
        priorGroup(),
        toggle("Adaptive span", "span", "{}", "Adaptive attention span", R"({"span": {"z": [8]}})",
               "a_ij ∝ m_z(|i − j|)·e^(s_ij), m_z(x) = clamp((R + z − x)/R, 0, 1)",
               integer("z", "Span z", 0, 1024, 8)),
        toggle("Talking heads", "talking_heads", "{}", "Talking heads (identity mixes)",
               R"({"talking_heads": {}})",
               "L_a = Σ_b P_l[a,b]·J_b before the softmax, U_a = Σ_b P_w[a,b]·W_b after"),
        positionGroup(),
        toggle("Feed-forward", "drop_ffn", "true", "Drop every FFN sub-layer",
               R"({"drop_ffn": true})", "x = x + Attn(x) only: attention without the FFN"),
        earlyExitGroup(),
        toggle("Segment recurrence", "recurrence", "{}", "Transformer-XL recurrence (segments of 16)",
               R"({"recurrence": {"segment": 16, "memory": 16}})",
               "segments of 16 tokens; keys and values also from the M states before the segment",
               integer("memory", "Memory M", 0, 1024, 16, 16)),
    };
    return groups;
}

int choiceOf(const QJsonObject& spec, const OptionGroup& group) {
    if (!spec.contains(group.key)) return 0;
    if (group.style == GroupStyle::Toggle) return 1;
    const QJsonValue value = spec.value(group.key);
    const QString id =
        group.field.isEmpty() ? value.toString() : value.toObject().value(group.field).toString();
    for (std::size_t i = 0; i < group.choices.size(); ++i)
        if (group.choices[i].id == id) return int(i);
    return 0;
}

QJsonObject withChoice(QJsonObject spec, const OptionGroup& group, int choice,
                       std::optional<double> parameter) {
    spec.remove(group.key);
    if (choice <= 0) return spec;
    const OptionChoice& c = group.choices[std::size_t(choice)];
    if (c.id == QStringLiteral("true")) {
        spec.insert(group.key, true);
        return spec;
    }
    if (group.field.isEmpty() && group.style != GroupStyle::Toggle) {
        spec.insert(group.key, c.id);
        return spec;
    }
    // The choice's own usage is the base, so options a parameter does not set keep its values.
    QJsonObject object = QJsonDocument::fromJson(c.usage.toUtf8()).object().value(group.key).toObject();
    if (!group.field.isEmpty()) object.insert(group.field, c.id);
    if (c.parameter.key) {
        const QJsonValue value =
            parameterValue(c.parameter, parameter.value_or(c.parameter.fallback));
        // Why a list for the span: z is per head, cycling; one value applies to every head.
        object.insert(c.parameter.key,
                      group.key == QStringLiteral("span") ? QJsonValue(QJsonArray{value}) : value);
    }
    spec.insert(group.key, object);
    return spec;
}

double parameterOf(const QJsonObject& spec, const OptionGroup& group, int choice) {
    const OptionParameter& p = group.choices[std::size_t(choice)].parameter;
    if (!p.key) return 0.0;
    const QJsonValue value = spec.value(group.key).toObject().value(p.key);
    if (value.isArray()) return value.toArray().first().toDouble(p.fallback);
    return value.toDouble(p.fallback);
}

const CatalogueEntry* catalogueEntryOf(const OptionChoice& choice) {
    if (choice.usage.isEmpty()) return nullptr;
    for (const auto* list : {&variants::catalogue(), &earlyExitEntries()})
        for (const CatalogueEntry& entry : *list)
            if (QString::fromUtf8(entry.usage) == choice.usage) return &entry;
    return nullptr;
}

QString choiceTooltip(const OptionChoice& choice, const QString& unavailable) {
    QString tip;
    const CatalogueEntry* entry = catalogueEntryOf(choice);
    if (entry) {
        tip = QStringLiteral("<b>%1</b><br>%2 · catalogue item %3")
                  .arg(QString::fromUtf8(entry->name).toHtmlEscaped(),
                       QString::fromUtf8(entry->family).toHtmlEscaped())
                  .arg(entry->item);
    } else {
        tip = QStringLiteral("<b>%1</b><br>the checkpoint's own behaviour")
                  .arg(choice.label.toHtmlEscaped());
    }
    if (!choice.formula.isEmpty())
        tip += QStringLiteral("<p><i>%1</i></p>").arg(choice.formula.toHtmlEscaped());
    if (entry) {
        if (*entry->parameters)
            tip += QStringLiteral("<p>Parameters: %1</p>")
                       .arg(QString::fromUtf8(entry->parameters).toHtmlEscaped());
        tip +=
            QStringLiteral("<p>%1</p><p><b>%2</b>: %3</p><p><tt>%4</tt></p>")
                .arg(QString::fromUtf8(entry->citation).toHtmlEscaped(),
                     QString::fromLatin1(variants::needsName(entry->needs)),
                     needsMeaning(entry->needs), QString::fromUtf8(entry->usage).toHtmlEscaped());
    }
    if (!unavailable.isEmpty())
        tip += QStringLiteral("<p style='color:#b00020'><b>Not available here:</b> %1</p>")
                   .arg(unavailable.toHtmlEscaped());
    return tip;
}
} // namespace headlight::app
