#pragma once
// The variant panel's options as data: each family is a group of choices (or one on/off toggle)
// that reads and writes its part of a variant spec's JSON (docs/variants.md). The groups are
// panel layout only; their choices are the catalogue entries (variants/catalogue.h) whose usage
// sets the group's key and that carry a panel label, in catalogue order, so each choice's label,
// usage, formula and parameter come from the catalogue.
//
//   optionGroups      the families, in panel order
//   choiceOf          which choice of a group a spec selects
//   withChoice        a spec with one group's choice (and its parameter) replaced
//   parameterOf       the group's parameter as the spec holds it

#include "variants/catalogue.h"

#include <QJsonObject>
#include <QString>
#include <optional>
#include <vector>

namespace headlight::app {

struct OptionChoice {
    QString id;    // the JSON value ("lsh", "longformer", "residual", ...); "" for off
    QString label; // what the panel shows
    // The catalogue entry; for the first choice (the checkpoint's own behaviour) null, or the
    // vanilla entry whose formula the choice shows.
    const variants::CatalogueEntry* entry = nullptr;
    variants::ParameterControl parameter; // the entry's, or none
};

enum class GroupStyle { Combo, Radios, Toggle };

struct OptionGroup {
    QString title;
    GroupStyle style = GroupStyle::Combo;
    QString key;   // top-level JSON key ("attention", "mask", "prior", "position", ...)
    QString field; // key of the choice inside that object ("kernel", "preset", "kind",
                   // "criterion"); "" when the top-level value itself is the choice
    std::vector<OptionChoice> choices; // choices[0] is "off" (the checkpoint's own behaviour)
};

const std::vector<OptionGroup>& optionGroups();

int choiceOf(const QJsonObject& spec, const OptionGroup& group);
QJsonObject withChoice(QJsonObject spec, const OptionGroup& group, int choice,
                       std::optional<double> parameter);
double parameterOf(const QJsonObject& spec, const OptionGroup& group, int choice);

// Rich-text tooltip: name, family and item, formula, parameters, citation, the needs tag and its
// meaning, the JSON; with `unavailable` set, the reason the checkpoint cannot run it.
QString choiceTooltip(const OptionChoice& choice, const QString& unavailable = {});
} // namespace headlight::app
