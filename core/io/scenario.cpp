// JSON ⇄ Scenario. Strict on purpose, as the variant spec: a misspelt key in a lesson would
// otherwise silently show a class the wrong head or the vanilla model.
#include "io/scenario.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>

namespace headlight::io {
namespace {

constexpr int kMaxIndex = 1'000'000;

ScenarioSelection selectionFromJson(SceneFields fields) {
    ScenarioSelection selection;
    selection.layer = fields.integer("layer", 0, 0, kMaxIndex);
    selection.head = fields.integer("head", 0, 0, kMaxIndex);
    selection.query = fields.integer("query", -1, -1, kMaxIndex);
    selection.average = fields.boolean("average", false);
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
    return scenario;
}

QJsonObject scenarioToJson(const Scenario& scenario) {
    const ScenarioSelection& chosen = scenario.selection;
    const QJsonObject selection{{"layer", chosen.layer},
                                {"head", chosen.head},
                                {"query", chosen.query},
                                {"average", chosen.average}};
    QJsonObject json{{"model", QString::fromStdString(scenario.model)},
                     {"text", QString::fromStdString(scenario.text)},
                     {"variant", scenario.variant},
                     {"view", QString::fromStdString(scenario.view)},
                     {"selection", selection},
                     {"colormap", QString::fromStdString(scenario.colormap)}};
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
    return json;
}

variants::VariantSpec parseScenarioVariant(const QJsonObject& variant) {
    return variants::parseVariantSpec(
        QJsonDocument(variant).toJson(QJsonDocument::Compact).toStdString());
}
} // namespace headlight::io
