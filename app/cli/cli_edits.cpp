#include "cli_edits.h"

#include "analysis/residual_edit_spec.h"

#include <QJsonObject>
#include <cmath>

namespace headlight::app {
namespace {

analysis::SaeFeatureEdits featureEditsOf(const CliArgs& args) {
    analysis::SaeFeatureEdits edits;
    try {
        for (const QString& entry : args.values("--clamp"))
            edits.clamps.push_back(analysis::parseFeatureValue("--clamp", entry.toStdString()));
        for (const QString& entry : args.values("--steer"))
            edits.steers.push_back(analysis::parseFeatureValue("--steer", entry.toStdString()));
        if (args.has("--splice"))
            edits.splice = analysis::saeSpliceFromName(args.value("--splice").toStdString());
    } catch (const std::invalid_argument& error) {
        throw CliError(error.what());
    }
    if (!edits.clamps.empty() && edits.splice == analysis::SaeSplice::None)
        throw CliError("--clamp edits the SAE's features, which reach the pass only through its "
                       "reconstruction: give --splice with-error or --splice no-error");
    return edits;
}

float strengthOf(const CliArgs& args) {
    if (!args.has("--strength")) return 1.0f;
    bool ok = false;
    const double strength = args.value("--strength").toDouble(&ok);
    if (!ok || !std::isfinite(strength) || std::abs(strength) > 1e6)
        throw CliError("--strength '" + args.value("--strength").toStdString() +
                       "' is not a number from -1e6 to 1e6");
    return float(strength);
}

QJsonArray featureValuesJson(const std::vector<analysis::FeatureValue>& entries) {
    QJsonArray array;
    for (const analysis::FeatureValue& e : entries)
        array.append(QJsonObject{{"feature", e.feature}, {"value", double(e.value)}});
    return array;
}

QString featureValuesText(const char* word, const std::vector<analysis::FeatureValue>& entries) {
    QStringList parts;
    for (const analysis::FeatureValue& e : entries)
        parts << QStringLiteral("%1=%2").arg(e.feature).arg(double(e.value));
    return parts.isEmpty() ? QString() : QStringLiteral(", %1 %2").arg(word, parts.join(','));
}

QString editDescription(const analysis::ResidualEditSpec& spec,
                        const analysis::HookedEdit& hooked) {
    const QString source = QString::fromStdString(hooked.source);
    const QString hook = QString::fromStdString(hooked.hook);
    if (spec.sae.empty())
        return QStringLiteral("steering vector %1 at %2, strength %3")
            .arg(source, hook)
            .arg(double(spec.strength));
    return QStringLiteral("SAE %1 at %2: splice %3%4%5")
        .arg(source, hook, QString::fromLatin1(analysis::saeSpliceName(spec.features.splice)),
             featureValuesText("clamp", spec.features.clamps),
             featureValuesText("steer", spec.features.steers));
}

QJsonObject editJson(const analysis::ResidualEditSpec& spec, const analysis::HookedEdit& hooked) {
    const QString source = QString::fromStdString(hooked.source);
    const QString hook = QString::fromStdString(hooked.hook);
    if (spec.sae.empty())
        return {{"kind", "steering_vector"},
                {"file", source},
                {"hook", hook},
                {"strength", double(spec.strength)}};
    return {{"kind", "sae"},
            {"sae", source},
            {"hook", hook},
            {"splice", analysis::saeSpliceName(spec.features.splice)},
            {"clamp", featureValuesJson(spec.features.clamps)},
            {"steer", featureValuesJson(spec.features.steers)}};
}

// The edits the arguments name, as a scenario records them.
std::vector<analysis::ResidualEditSpec> editSpecsOf(const CliArgs& args) {
    std::vector<analysis::ResidualEditSpec> specs;
    if (args.has("--sae"))
        specs.push_back({args.value("--sae").toStdString(), featureEditsOf(args), {}, 1.0f});
    if (args.has("--steering-vector"))
        specs.push_back({{}, {}, args.value("--steering-vector").toStdString(), strengthOf(args)});
    return specs;
}
} // namespace

bool wantsResidualEdits(const CliArgs& args) {
    return args.has("--sae") || args.has("--steering-vector");
}

void checkResidualEditArguments(const CliArgs& args) {
    const bool featureEdits = args.has("--clamp") || args.has("--steer") || args.has("--splice");
    if (featureEdits && !args.has("--sae"))
        throw CliError("--clamp, --steer and --splice edit an SAE's features: give --sae DIR");
    if (args.has("--sae") && !featureEdits)
        throw CliError("--sae needs an edit: --clamp F=V, --steer F=A or --splice "
                       "with-error|no-error");
    if (args.has("--strength") && !args.has("--steering-vector"))
        throw CliError("--strength scales --steering-vector: give one");
    editSpecsOf(args);
}

CliResidualEdits residualEditsFor(const CliArgs& args, const ModelSpec& spec) {
    CliResidualEdits out;
    for (const analysis::ResidualEditSpec& edit : editSpecsOf(args)) {
        std::vector<analysis::HookedEdit> built;
        try {
            built = analysis::residualEditsOf(edit, spec);
        } catch (const analysis::ResidualEditError& error) {
            throw CliError(error.what());
        }
        for (analysis::HookedEdit& hooked : built) {
            out.descriptions << editDescription(edit, hooked);
            out.json.append(editJson(edit, hooked));
            out.edits.push_back(std::move(hooked.edit));
        }
    }
    return out;
}

std::vector<CliOption> residualEditOptions() {
    return {
        {"--sae", "DIR",
         "the SAELens SAE (folder or cached ORG/NAME/FOLDER, as `features` reads it) whose "
         "features --clamp, --steer and --splice edit at its hook (blocks.L.hook_resid_pre or "
         "hook_resid_post); the output change against the clean pass is printed as for --ablate"},
        {"--clamp", "F=V",
         "set feature F (from 0) to V at every position (0 zeroes it); repeatable; needs --splice"},
        {"--steer", "F=A",
         "add A times feature F's decoder row (W_dec[F], as stored) to the hook's activations at "
         "every position; repeatable"},
        {"--splice", "with-error|no-error",
         "put the SAE's reconstruction of the (clamped) features in place of the activations: "
         "with-error adds back x - SAE(x), so only the edit changes the pass; no-error leaves the "
         "reconstruction error out (SAELens's use_error_term)"},
        {"--steering-vector", "FILE",
         "add a steering vector: a .safetensors of `headlight steer` (at its hook) or a llama.cpp "
         "control vector .gguf (direction.N added to block N's output)"},
        {"--strength", "A", "the steering vector's multiplier (default 1)"},
    };
}
} // namespace headlight::app
