#pragma once
// The variant panel's options as data: each family is a group of choices (or one on/off toggle)
// that reads and writes its part of a variant spec's JSON (docs/variants.md), with the catalogue
// entry its tooltip quotes, the formula, and its main parameter. The panel is built from this
// table, so every choice and the JSON it writes sit in one place.
//
//   optionGroups      the families, in panel order
//   choiceOf          which choice of a group a spec selects
//   withChoice        a spec with one group's choice (and its parameter) replaced
//   parameterOf       the group's parameter as the spec holds it
//   catalogueEntryOf  the catalogue entry of a choice (null for "off")

#include "variants/catalogue.h"

#include <QJsonObject>
#include <QString>
#include <optional>
#include <vector>

namespace headlight::app {

struct OptionParameter {
    const char* key = nullptr; // JSON key inside the group's object; null: no parameter
    QString label;
    double low = 0.0, high = 0.0, step = 1.0, fallback = 0.0;
    int decimals = 0;
};

struct OptionChoice {
    QString id;    // the JSON value ("lsh", "longformer", "residual", ...); "" for off
    QString label; // what the panel shows
    QString usage; // the catalogue's usage JSON, to find its entry; "" for off
    QString formula;
    OptionParameter parameter;
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
const variants::CatalogueEntry* catalogueEntryOf(const OptionChoice& choice);

// Rich-text tooltip: name, family and item, formula, parameters, citation, the needs tag and its
// meaning, the JSON; with `unavailable` set, the reason the checkpoint cannot run it.
QString choiceTooltip(const OptionChoice& choice, const QString& unavailable = {});
} // namespace headlight::app
