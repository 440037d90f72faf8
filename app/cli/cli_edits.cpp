#include "cli_edits.h"

#include "analysis/sae_edit.h"
#include "analysis/steering_vector.h"
#include "io/gguf.h"
#include "io/hub_cache.h"
#include "io/sae_folder.h"
#include "io/steering_vector_file.h"

#include <QJsonObject>
#include <cmath>
#include <memory>

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

analysis::SaeHook hookOf(const std::string& name, int layers, const std::string& what) {
    try {
        return analysis::parseSaeHook(name, layers);
    } catch (const std::invalid_argument& error) {
        throw CliError(what + ": " + error.what());
    }
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

void addSaeEdit(const CliArgs& args, const ModelSpec& spec, CliResidualEdits& out) {
    const std::string folder = io::resolveCachedSubfolder(args.value("--sae").toStdString()).folder;
    io::SaeFolder sae;
    try {
        sae = io::readSaeFolder(folder);
    } catch (const io::SaeFolderError& error) {
        throw CliError(std::string("--sae ") + error.what());
    }
    const std::string& hookName = sae.config.hookName;
    const analysis::SaeHook hook = hookOf(hookName, spec.layers, "--sae");
    if (sae.config.dIn != spec.hidden)
        throw CliError("the SAE reads " + std::to_string(sae.config.dIn) + " values per token at " +
                       hookName + " but the model's residual stream has " +
                       std::to_string(spec.hidden));
    const analysis::SaeFeatureEdits edits = featureEditsOf(args);
    try {
        out.edits.push_back(analysis::saeResidualEdit(
            std::make_shared<const analysis::SparseAutoencoder>(std::move(sae.sae)), edits, hook,
            hookName));
    } catch (const std::invalid_argument& error) {
        throw CliError(error.what());
    }
    out.descriptions << QStringLiteral("SAE %1 at %2: splice %3%4%5")
                            .arg(QString::fromStdString(folder), QString::fromStdString(hookName),
                                 QString::fromLatin1(analysis::saeSpliceName(edits.splice)),
                                 featureValuesText("clamp", edits.clamps),
                                 featureValuesText("steer", edits.steers));
    out.json.append(QJsonObject{{"kind", "sae"},
                                {"sae", QString::fromStdString(folder)},
                                {"hook", QString::fromStdString(hookName)},
                                {"splice", analysis::saeSpliceName(edits.splice)},
                                {"clamp", featureValuesJson(edits.clamps)},
                                {"steer", featureValuesJson(edits.steers)}});
}

void addVectorEdit(const std::string& path, const std::string& hookName, const Tensor& direction,
                   float strength, const ModelSpec& spec, CliResidualEdits& out) {
    const analysis::SaeHook hook = hookOf(hookName, spec.layers, "--steering-vector " + path);
    if (int64_t(direction.size()) != spec.hidden)
        throw CliError("--steering-vector " + path + ": the vector at " + hookName + " has " +
                       std::to_string(direction.size()) +
                       " values but the model's residual stream has " +
                       std::to_string(spec.hidden));
    out.edits.push_back(analysis::steeringEdit(direction, strength,
                                               analysis::residualStreamOfHook(hook),
                                               "the steering vector at " + hookName));
    out.descriptions << QStringLiteral("steering vector %1 at %2, strength %3")
                            .arg(QString::fromStdString(path), QString::fromStdString(hookName))
                            .arg(double(strength));
    out.json.append(QJsonObject{{"kind", "steering_vector"},
                                {"file", QString::fromStdString(path)},
                                {"hook", QString::fromStdString(hookName)},
                                {"strength", double(strength)}});
}

void addSteeringVector(const CliArgs& args, const ModelSpec& spec, CliResidualEdits& out) {
    const std::string path = args.value("--steering-vector").toStdString();
    const float strength = strengthOf(args);
    try {
        if (!path.ends_with(".gguf")) {
            const io::SteeringVectorFile file = io::readSteeringVector(path);
            addVectorEdit(path, file.hook, file.direction, strength, spec, out);
            return;
        }
        for (const io::ControlDirection& d :
             io::controlVectorDirections(io::readGguf(path), path)) {
            if (d.block >= spec.layers)
                throw CliError("--steering-vector " + path + ": direction." +
                               std::to_string(d.block) + " steers block " +
                               std::to_string(d.block) + " but the model has " +
                               std::to_string(spec.layers) + " (0 to " +
                               std::to_string(spec.layers - 1) + ")");
            addVectorEdit(path, "blocks." + std::to_string(d.block) + ".hook_resid_post",
                          d.direction, strength, spec, out);
        }
    } catch (const CliError&) {
        throw;
    } catch (const std::exception& error) {
        throw CliError(std::string("--steering-vector ") + error.what());
    }
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
    if (args.has("--sae")) featureEditsOf(args);
    if (args.has("--steering-vector")) strengthOf(args);
}

CliResidualEdits residualEditsFor(const CliArgs& args, const ModelSpec& spec) {
    CliResidualEdits out;
    if (args.has("--sae")) addSaeEdit(args, spec, out);
    if (args.has("--steering-vector")) addSteeringVector(args, spec, out);
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
