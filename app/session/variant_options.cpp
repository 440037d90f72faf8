#include "variant_options.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <cmath>

namespace headlight::app {
namespace {

using variants::CatalogueEntry;

QJsonObject usageOf(const CatalogueEntry& entry) {
    return QJsonDocument::fromJson(entry.usage).object();
}

// The vanilla entry: the kernel group's first choice shows its formula.
const CatalogueEntry* vanillaEntry() {
    for (const CatalogueEntry& entry : variants::catalogue())
        if (usageOf(entry).isEmpty()) return &entry;
    return nullptr;
}

// A choice's id: the value of the group's field, or else the group's own value: a string, or for
// a toggle "true" (a flag) or "{}" (an object of settings).
QString choiceId(const QJsonValue& value, const QString& field) {
    if (!field.isEmpty()) return value.toObject().value(field).toString();
    if (value.isString()) return value.toString();
    return value.isBool() ? QStringLiteral("true") : QStringLiteral("{}");
}

// The group's choices after `off`: every catalogue entry with a panel label whose usage sets
// `key`, in catalogue order.
OptionGroup group(const char* title, GroupStyle style, const char* key, const char* field,
                  OptionChoice off) {
    OptionGroup result{title, style, key, field, {std::move(off)}};
    for (const CatalogueEntry& entry : variants::catalogue()) {
        const QJsonValue value = usageOf(entry).value(result.key);
        if (!entry.panelLabel || value.isUndefined()) continue;
        result.choices.push_back({choiceId(value, result.field),
                                  QString::fromUtf8(entry.panelLabel), &entry, entry.control});
    }
    return result;
}

QJsonValue parameterValue(const variants::ParameterControl& parameter, double value) {
    if (parameter.decimals == 0) return QJsonValue(qint64(std::llround(value)));
    return QJsonValue(value);
}
} // namespace

const std::vector<OptionGroup>& optionGroups() {
    using enum GroupStyle;
    static const std::vector<OptionGroup> groups{
        group("Attention kernel", Combo, "attention", "kernel",
              {"softmax", "Exact softmax (the checkpoint's own)", vanillaEntry(), {}}),
        group("Sparse mask", Combo, "mask", "preset", {"", "None (every key)", nullptr, {}}),
        group("Prior between layers", Radios, "prior", "kind", {"", "None", nullptr, {}}),
        group("Adaptive span", Toggle, "span", "", {}),
        group("Talking heads", Toggle, "talking_heads", "", {}),
        group("Position encoding", Radios, "position", "",
              {"checkpoint", "The checkpoint's own", nullptr, {}}),
        group("Feed-forward", Toggle, "drop_ffn", "", {}),
        group("Early exit", Combo, "early_exit", "criterion",
              {"", "None (every layer runs)", nullptr, {}}),
        group("Segment recurrence", Toggle, "recurrence", "", {}),
        group("Attention rule", Radios, "attention_rule", "kind",
              {"", "Softmax (the checkpoint's own)", nullptr, {}}),
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
    // The choice's own usage is the base, so options a parameter does not set keep its values.
    const QJsonValue usage = usageOf(*c.entry).value(group.key);
    if (!usage.isObject()) { // "position": "alibi", "drop_ffn": true
        spec.insert(group.key, usage);
        return spec;
    }
    QJsonObject object = usage.toObject();
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
    const variants::ParameterControl& p = group.choices[std::size_t(choice)].parameter;
    if (!p.key) return 0.0;
    const QJsonValue value = spec.value(group.key).toObject().value(p.key);
    if (value.isArray()) return value.toArray().first().toDouble(p.fallback);
    return value.toDouble(p.fallback);
}

QString choiceTooltip(const OptionChoice& choice, const QString& unavailable) {
    const CatalogueEntry* entry = choice.entry;
    // The vanilla entry (item 1) is the checkpoint's own pass: the first choice of a group.
    const bool own = !entry || entry->item == 1;
    QString tip = own ? QStringLiteral("<b>%1</b><br>the checkpoint's own behaviour")
                            .arg(choice.label.toHtmlEscaped())
                      : QStringLiteral("<b>%1</b><br>%2 · catalogue item %3")
                            .arg(QString::fromUtf8(entry->name).toHtmlEscaped(),
                                 QString::fromUtf8(entry->family).toHtmlEscaped())
                            .arg(entry->item);
    if (entry)
        tip += QStringLiteral("<p><i>%1</i></p>")
                   .arg(QString::fromUtf8(entry->formula).toHtmlEscaped());
    if (!own) {
        if (*entry->parameters)
            tip += QStringLiteral("<p>Parameters: %1</p>")
                       .arg(QString::fromUtf8(entry->parameters).toHtmlEscaped());
        tip += QStringLiteral("<p>%1</p><p><b>%2</b>: %3</p><p><tt>%4</tt></p>")
                   .arg(QString::fromUtf8(entry->citation).toHtmlEscaped(),
                        QString::fromLatin1(variants::needsName(entry->needs)),
                        QString::fromUtf8(variants::needsMeaning(entry->needs)),
                        QString::fromUtf8(entry->usage).toHtmlEscaped());
    }
    if (!unavailable.isEmpty())
        tip += QStringLiteral("<p style='color:#b00020'><b>Not available here:</b> %1</p>")
                   .arg(unavailable.toHtmlEscaped());
    return tip;
}
} // namespace headlight::app
