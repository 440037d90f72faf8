// JSON ⇄ Scenario. Strict on purpose, as the variant spec: a misspelt key in a lesson would
// otherwise silently show a class the wrong head or the vanilla model.
#include "io/scenario.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <cmath>

namespace headlight::io {
namespace {

constexpr int kMaxIndex = 1'000'000;

ScenarioSelection selectionFromJson(SceneFields fields) {
    ScenarioSelection selection;
    selection.layer = fields.integer("layer", 0, 0, kMaxIndex);
    selection.head = fields.integer("head", 0, 0, kMaxIndex);
    selection.query = fields.integer("query", -1, -1, kMaxIndex);
    selection.average = fields.boolean("average", false);
    selection.feature = fields.integer("feature", -1, -1, 100'000'000);
    fields.finish();
    return selection;
}

QJsonObject checkedVariant(SceneFields& fields) {
    if (!fields.has("variant")) return (void)fields.take("variant"), QJsonObject{};
    const QJsonObject variant = fields.object("variant");
    try {
        parseScenarioVariant(variant);
    } catch (const variants::VariantError& error) {
        fields.fail("variant", std::string("is not a valid variant spec (") + error.what() + ")");
    }
    return variant;
}

// "ablation": [{"layer": L, "head": H, "mode": "zero" | "mean" | "replace"}, ...]; which heads
// exist is the model's knowledge, checked when the pass is planned.
std::vector<variants::HeadAblationSpec> ablationFromJson(SceneFields& fields) {
    std::vector<variants::HeadAblationSpec> specs;
    if (!fields.has("ablation")) return (void)fields.take("ablation"), specs;
    const QJsonArray entries = fields.array("ablation");
    for (qsizetype i = 0; i < entries.size(); ++i) {
        const std::string where = fields.path("ablation") + "[" + std::to_string(i) + "]";
        if (!entries[i].isObject())
            fields.fail("ablation", "must hold objects {\"layer\", \"head\", \"mode\"}");
        SceneFields entry(entries[i].toObject(), fields.kind(), where);
        variants::HeadAblationSpec spec;
        spec.layer = entry.integer("layer", 0, 0, kMaxIndex);
        spec.head = entry.integer("head", 0, 0, kMaxIndex);
        spec.mode = *variants::ablationModeFromName(
            entry.choice("mode", {"zero", "mean", "replace"}, false, "zero"));
        entry.finish();
        specs.push_back(spec);
    }
    return specs;
}

// [{"feature": F, "value": V}, ...] of an edit's "clamp" or "steer".
std::vector<analysis::FeatureValue> featureValuesFromJson(SceneFields& fields, const char* key) {
    std::vector<analysis::FeatureValue> values;
    if (!fields.has(key)) return (void)fields.take(key), values;
    const QJsonArray entries = fields.array(key);
    for (qsizetype i = 0; i < entries.size(); ++i) {
        if (!entries[i].isObject()) fields.fail(key, "must hold objects {\"feature\", \"value\"}");
        SceneFields entry(entries[i].toObject(), fields.kind(),
                          fields.path(key) + "[" + std::to_string(i) + "]");
        analysis::FeatureValue value;
        value.feature = entry.integer("feature", 0, 0, 100'000'000);
        const QJsonValue number = entry.take("value");
        if (!number.isDouble() || std::abs(number.toDouble()) > 1e30)
            entry.fail("value", "must be a number");
        value.value = float(number.toDouble());
        entry.finish();
        values.push_back(value);
    }
    return values;
}

// "edits": [{"sae": DIR, "splice": ..., "clamp": [...], "steer": [...]} or
// {"steering_vector": FILE, "strength": A}, ...]; whether the files fit the model is checked when
// the pass is planned.
std::vector<analysis::ResidualEditSpec> editsFromJson(SceneFields& fields) {
    std::vector<analysis::ResidualEditSpec> edits;
    if (!fields.has("edits")) return (void)fields.take("edits"), edits;
    const QJsonArray entries = fields.array("edits");
    for (qsizetype i = 0; i < entries.size(); ++i) {
        if (!entries[i].isObject())
            fields.fail("edits", "must hold objects {\"sae\", ...} or {\"steering_vector\", ...}");
        SceneFields entry(entries[i].toObject(), fields.kind(),
                          fields.path("edits") + "[" + std::to_string(i) + "]");
        analysis::ResidualEditSpec edit;
        if (entry.has("sae")) {
            edit.sae = entry.text("sae", true);
            edit.features.splice = analysis::saeSpliceFromName(
                entry.choice("splice", {"none", "with-error", "no-error"}, false, "none"));
            edit.features.clamps = featureValuesFromJson(entry, "clamp");
            edit.features.steers = featureValuesFromJson(entry, "steer");
            if (!edit.features.clamps.empty() && edit.features.splice == analysis::SaeSplice::None)
                entry.fail("splice", "is none: a clamp reaches the pass only through the SAE's "
                                     "reconstruction (with-error or no-error)");
        } else {
            edit.steeringVector = entry.text("steering_vector", true);
            const QJsonValue strength = entry.take("strength");
            if (!strength.isUndefined() &&
                (!strength.isDouble() || std::abs(strength.toDouble()) > 1e6))
                entry.fail("strength", "must be a number from -1e6 to 1e6");
            edit.strength = float(strength.toDouble(1.0));
        }
        entry.finish();
        edits.push_back(edit);
    }
    return edits;
}

QJsonArray featureValuesJson(const std::vector<analysis::FeatureValue>& values) {
    QJsonArray array;
    for (const analysis::FeatureValue& v : values)
        array.append(QJsonObject{{"feature", v.feature}, {"value", double(v.value)}});
    return array;
}

QJsonObject editJson(const analysis::ResidualEditSpec& edit) {
    if (edit.sae.empty())
        return {{"steering_vector", QString::fromStdString(edit.steeringVector)},
                {"strength", double(edit.strength)}};
    QJsonObject json{{"sae", QString::fromStdString(edit.sae)},
                     {"splice", QLatin1String(analysis::saeSpliceName(edit.features.splice))}};
    if (!edit.features.clamps.empty()) json["clamp"] = featureValuesJson(edit.features.clamps);
    if (!edit.features.steers.empty()) json["steer"] = featureValuesJson(edit.features.steers);
    return json;
}

// {"seed", "count", "length"}: the ranges `headlight heads` takes.
std::optional<analysis::GeneratedProbeSet> probesFromJson(SceneFields& fields) {
    if (!fields.has("head_role_probes")) return (void)fields.take("head_role_probes"), std::nullopt;
    SceneFields probes = fields.nested("head_role_probes");
    analysis::GeneratedProbeSet set;
    set.seed = probes.integer("seed", set.seed, 0, 2147483647);
    set.count = probes.integer("count", set.count, 1, 1000);
    set.length = probes.integer("length", set.length, 1, 100000);
    probes.finish();
    return set;
}

std::optional<BackendKind> backendFromJson(SceneFields& fields) {
    if (!fields.has("backend")) return (void)fields.take("backend"), std::nullopt;
    const BackendKind kinds[] = {BackendKind::Cpu, BackendKind::Vulkan};
    std::vector<std::string> names;
    for (const BackendKind kind : kinds)
        names.emplace_back(backendName(kind));
    return parseBackend(fields.choice("backend", names, true));
}
} // namespace

Scenario scenarioFromJson(SceneFields& fields, const SceneVocabulary& vocabulary) {
    Scenario scenario;
    scenario.model = fields.text("model", true);
    if (scenario.model.empty())
        fields.fail("model", "is empty: name a zoo model or a checkpoint folder");
    scenario.revision = fields.text("revision", false);
    scenario.text = fields.text("text", true);
    scenario.variant = checkedVariant(fields);
    scenario.backend = backendFromJson(fields);
    scenario.view = fields.choice("view", vocabulary.views, true);
    if (fields.has("selection"))
        scenario.selection = selectionFromJson(fields.nested("selection"));
    else
        fields.take("selection");
    scenario.colormap = fields.choice("colormap", vocabulary.colormaps, false, scenario.colormap);
    scenario.ablation = ablationFromJson(fields);
    scenario.ablationSource = fields.text("ablation_source", false);
    const bool replaces =
        std::any_of(scenario.ablation.begin(), scenario.ablation.end(),
                    [](const auto& spec) { return spec.mode == variants::AblationMode::Replace; });
    if (replaces && scenario.ablationSource.empty())
        fields.fail("ablation_source", "is missing: a replace ablation takes its head outputs "
                                       "from this text");
    scenario.edits = editsFromJson(fields);
    scenario.sae = fields.text("sae", false);
    scenario.saeScan = fields.text("sae_scan", false);
    scenario.saeLabels = fields.text("sae_labels", false);
    for (const auto& [key, value] :
         {std::pair{"sae_scan", &scenario.saeScan}, std::pair{"sae_labels", &scenario.saeLabels}})
        if (!value->empty() && scenario.sae.empty())
            fields.fail(key, "names a file for the SAE, but the scene has no \"sae\"");
    scenario.headRoleProbes = probesFromJson(fields);
    return scenario;
}

QJsonObject scenarioToJson(const Scenario& scenario) {
    const ScenarioSelection& chosen = scenario.selection;
    QJsonObject selection{{"layer", chosen.layer},
                          {"head", chosen.head},
                          {"query", chosen.query},
                          {"average", chosen.average}};
    if (chosen.feature >= 0) selection.insert("feature", chosen.feature);
    QJsonObject json{{"model", QString::fromStdString(scenario.model)},
                     {"text", QString::fromStdString(scenario.text)},
                     {"variant", scenario.variant},
                     {"view", QString::fromStdString(scenario.view)},
                     {"selection", selection},
                     {"colormap", QString::fromStdString(scenario.colormap)}};
    if (!scenario.revision.empty())
        json.insert("revision", QString::fromStdString(scenario.revision));
    if (scenario.backend) json.insert("backend", QLatin1String(backendName(*scenario.backend)));
    QJsonArray ablation;
    for (const variants::HeadAblationSpec& spec : scenario.ablation)
        ablation.append(
            QJsonObject{{"layer", spec.layer},
                        {"head", spec.head},
                        {"mode", QLatin1String(variants::ablationModeName(spec.mode))}});
    if (!ablation.isEmpty()) json.insert("ablation", ablation);
    if (!scenario.ablationSource.empty())
        json.insert("ablation_source", QString::fromStdString(scenario.ablationSource));
    QJsonArray edits;
    for (const analysis::ResidualEditSpec& edit : scenario.edits)
        edits.append(editJson(edit));
    if (!edits.isEmpty()) json.insert("edits", edits);
    if (!scenario.sae.empty()) json.insert("sae", QString::fromStdString(scenario.sae));
    if (!scenario.saeScan.empty())
        json.insert("sae_scan", QString::fromStdString(scenario.saeScan));
    if (!scenario.saeLabels.empty())
        json.insert("sae_labels", QString::fromStdString(scenario.saeLabels));
    if (const auto& probes = scenario.headRoleProbes)
        json.insert("head_role_probes", QJsonObject{{"seed", probes->seed},
                                                    {"count", probes->count},
                                                    {"length", probes->length}});
    return json;
}

variants::VariantSpec parseScenarioVariant(const QJsonObject& variant) {
    return variants::parseVariantSpec(
        QJsonDocument(variant).toJson(QJsonDocument::Compact).toStdString());
}
} // namespace headlight::io
