#include "feature_scan.h"

#include "text_input.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>
#include <algorithm>
#include <cmath>
#include <set>

namespace headlight::app {
namespace {

constexpr int kScanFormatVersion = 1;
constexpr const char* kScanFormatKey = "headlight.feature_scan";
constexpr qint64 kLargestScanFile = qint64(1) << 30; // a 262k-wide SAE at 10 contexts is ~300 MB
constexpr int kLargestWidth = 1 << 24;
constexpr int kMostContexts = 1000;

bool strongerContext(const FeatureContext& a, const FeatureContext& b) {
    if (a.activation != b.activation) return a.activation > b.activation;
    if (a.text != b.text) return a.text < b.text;
    return a.position < b.position;
}

// The text a token range covers, line breaks made visible; "" when no token in it has a span.
class ContextText {
public:
    ContextText(const PreparedText& prepared, const QString& source)
        : prepared_(prepared)
        , codePoints_(source.toUcs4()) {}

    QString before(int64_t token) const {
        const int64_t first = std::max<int64_t>(0, token - kContextBefore);
        QString text;
        if (prepared_.spans.empty()) {
            text = joinedLabels(first, token, true);
        } else {
            const auto [begin, end] = coveredBy(first, token);
            const auto [tokenBegin, tokenEnd] = prepared_.spans[std::size_t(token)];
            text = slice(begin, tokenEnd > tokenBegin ? tokenBegin : end);
        }
        return text.size() > kContextCharsBefore
                   ? QStringLiteral("…") + text.right(kContextCharsBefore - 1)
                   : text;
    }

    QString after(int64_t token) const {
        const int64_t last =
            std::min<int64_t>(int64_t(prepared_.labels.size()), token + 1 + kContextAfter);
        QString text;
        if (prepared_.spans.empty()) {
            text = joinedLabels(token + 1, last, false);
        } else {
            const auto [begin, end] = coveredBy(token + 1, last);
            const auto [tokenBegin, tokenEnd] = prepared_.spans[std::size_t(token)];
            text = slice(tokenEnd > tokenBegin ? tokenEnd : begin, end);
        }
        return text.size() > kContextCharsAfter
                   ? text.left(kContextCharsAfter - 1) + QStringLiteral("…")
                   : text;
    }

private:
    std::pair<int, int> coveredBy(int64_t first, int64_t last) const {
        int begin = -1, end = -1;
        for (int64_t t = first; t < last; ++t) {
            const auto [b, e] = prepared_.spans[std::size_t(t)];
            if (e <= b) continue; // a special token covers no text
            if (begin < 0) begin = b;
            end = std::max(end, e);
        }
        return {begin, end};
    }

    QString slice(int begin, int end) const {
        if (begin < 0 || end <= begin || end > int(codePoints_.size())) return {};
        QString text = QString::fromUcs4(
            reinterpret_cast<const char32_t*>(codePoints_.data()) + begin, end - begin);
        text.replace(QLatin1Char('\n'), QStringLiteral("↵"));
        text.replace(QLatin1Char('\t'), QLatin1Char(' '));
        return text;
    }

    // Token ids typed as text have no spans: their labels, a space apart.
    QString joinedLabels(int64_t first, int64_t last, bool before) const {
        QStringList parts;
        for (int64_t t = first; t < last; ++t)
            parts << prepared_.labels[int(t)];
        if (parts.isEmpty()) return {};
        const QString joined = parts.join(QLatin1Char(' '));
        return before ? joined + QLatin1Char(' ') : QLatin1Char(' ') + joined;
    }

    const PreparedText& prepared_;
    const QList<uint> codePoints_;
};

void keepStrongest(std::vector<FeatureContext>& top, FeatureContext context, int contexts) {
    const auto at = std::upper_bound(top.begin(), top.end(), context, strongerContext);
    top.insert(at, std::move(context));
    if (int(top.size()) > contexts) top.pop_back();
}

[[noreturn]] void refuseScan(const QString& path, const QString& why) {
    throw FeatureScanError(QStringLiteral("%1 is not a feature scan Headlight can read: %2")
                               .arg(QFileInfo(path).fileName(), why)
                               .toStdString());
}

QJsonArray contextJson(const FeatureContext& c) {
    return {double(c.text), double(c.position), double(c.activation), c.before, c.token, c.after};
}

// A whole number in [low, high], else the file is refused.
int64_t wholeNumber(const QJsonValue& value, int64_t low, int64_t high, const QString& path,
                    const QString& what) {
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || !std::isfinite(number) || number != std::floor(number) ||
        number < double(low) || number > double(high))
        refuseScan(
            path,
            QStringLiteral("%1 is not a whole number from %2 to %3").arg(what).arg(low).arg(high));
    return int64_t(number);
}

FeatureContext contextFrom(const QJsonValue& value, const QString& path) {
    const QJsonArray entry = value.toArray();
    if (!value.isArray() || entry.size() != 6 || !entry[3].isString() || !entry[4].isString() ||
        !entry[5].isString())
        refuseScan(path, QStringLiteral("a context is not [text, position, activation, before, "
                                        "token, after]"));
    FeatureContext c;
    c.text = wholeNumber(entry[0], 0, int64_t(1) << 40, path, QStringLiteral("a context's text"));
    c.position = wholeNumber(entry[1], 0, int64_t(1) << 40, path, QStringLiteral("a position"));
    const double activation = entry[2].toDouble(std::nan(""));
    if (!entry[2].isDouble() || !std::isfinite(activation) || activation <= 0.0)
        refuseScan(path, QStringLiteral("a context's activation is not a positive number"));
    c.activation = float(activation);
    c.before = entry[3].toString();
    c.token = entry[4].toString();
    c.after = entry[5].toString();
    return c;
}

QJsonDocument readDocument(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw FeatureScanError(
            QStringLiteral("cannot read %1: %2").arg(path, file.errorString()).toStdString());
    if (file.size() > kLargestScanFile) refuseScan(path, QStringLiteral("it is larger than 1 GiB"));
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError)
        refuseScan(
            path,
            QStringLiteral("JSON error at byte %1: %2").arg(error.offset).arg(error.errorString()));
    if (!document.isObject() ||
        document.object().value(kScanFormatKey).toInt() != kScanFormatVersion)
        refuseScan(
            path,
            QStringLiteral("it has no \"%1\": %2").arg(kScanFormatKey).arg(kScanFormatVersion));
    return document;
}
} // namespace

int FeatureScan::contexts() const {
    return settings.value("contexts").toInt();
}

QString FeatureScan::corpusName() const {
    return settings.value("corpus").toString();
}

FeatureScan emptyFeatureScan(int dSae, int contexts, QJsonObject settings) {
    FeatureScan scan;
    settings["d_sae"] = dSae;
    settings["contexts"] = contexts;
    scan.settings = std::move(settings);
    scan.fired.assign(std::size_t(dSae), 0);
    scan.top.resize(std::size_t(dSae));
    return scan;
}

void addScannedText(FeatureScan& scan, int64_t text, const Tensor& features,
                    const PreparedText& prepared, const QString& source) {
    const int64_t tokens = features.dim(0), width = features.dim(1);
    if (width != int64_t(scan.fired.size()) || tokens != int64_t(prepared.labels.size()))
        throw std::invalid_argument("the features do not fit the scan or the text");
    const ContextText around(prepared, source);
    const int contexts = scan.contexts();
    for (int64_t t = 0; t < tokens; ++t) {
        const float* row = features.data() + t * width;
        for (int64_t f = 0; f < width; ++f) {
            if (!(row[f] > 0.0f)) continue;
            ++scan.fired[std::size_t(f)];
            std::vector<FeatureContext>& top = scan.top[std::size_t(f)];
            FeatureContext context{text, t, row[f], {}, {}, {}};
            if (int(top.size()) == contexts && !strongerContext(context, top.back())) continue;
            context.before = around.before(t);
            context.token = prepared.labels[int(t)];
            context.after = around.after(t);
            keepStrongest(top, std::move(context), contexts);
        }
    }
    ++scan.texts;
    scan.tokens += tokens;
}

void writeFeatureScan(const QString& path, const FeatureScan& scan) {
    QJsonArray fired;
    for (const int64_t count : scan.fired)
        fired.append(double(count));
    QJsonObject top;
    for (std::size_t f = 0; f < scan.top.size(); ++f) {
        if (scan.top[f].empty()) continue;
        QJsonArray contexts;
        for (const FeatureContext& c : scan.top[f])
            contexts.append(contextJson(c));
        top[QString::number(f)] = contexts;
    }
    const QJsonObject json{
        {kScanFormatKey, kScanFormatVersion},
        {"settings", scan.settings},
        {"shard", QJsonObject{{"index", int(scan.place.index)}, {"count", int(scan.place.count)}}},
        {"texts", double(scan.texts)},
        {"tokens", double(scan.tokens)},
        {"failed", QJsonArray::fromStringList(scan.failed)},
        {"fired", fired},
        {"top", top}};
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(QJsonDocument(json).toJson(QJsonDocument::Compact)) < 0 || !file.commit())
        throw FeatureScanError(
            QStringLiteral("cannot write %1: %2").arg(path, file.errorString()).toStdString());
}

FeatureScan readFeatureScan(const QString& path) {
    const QJsonObject json = readDocument(path).object();
    FeatureScan scan;
    scan.file = QFileInfo(path).absoluteFilePath();
    scan.settings = json.value("settings").toObject();
    const int64_t width =
        wholeNumber(scan.settings.value("d_sae"), 1, kLargestWidth, path, QStringLiteral("d_sae"));
    const int contexts = int(wholeNumber(scan.settings.value("contexts"), 1, kMostContexts, path,
                                         QStringLiteral("contexts")));
    const QJsonObject shard = json.value("shard").toObject();
    scan.place.count = std::size_t(
        wholeNumber(shard.value("count"), 1, 1 << 20, path, QStringLiteral("the shard count")));
    scan.place.index =
        std::size_t(wholeNumber(shard.value("index"), 0, int64_t(scan.place.count) - 1, path,
                                QStringLiteral("the shard index")));
    scan.texts = wholeNumber(json.value("texts"), 0, int64_t(1) << 40, path, "texts");
    scan.tokens = wholeNumber(json.value("tokens"), 0, int64_t(1) << 50, path, "tokens");
    for (const QJsonValue& reason : json.value("failed").toArray())
        scan.failed << reason.toString();
    const QJsonArray fired = json.value("fired").toArray();
    if (fired.size() != width)
        refuseScan(
            path,
            QStringLiteral("it counts %1 features, not d_sae = %2").arg(fired.size()).arg(width));
    for (const QJsonValue& count : fired)
        scan.fired.push_back(wholeNumber(count, 0, scan.tokens, path, QStringLiteral("a count")));
    scan.top.resize(std::size_t(width));
    const QJsonObject top = json.value("top").toObject();
    for (auto it = top.begin(); it != top.end(); ++it) {
        bool ok = false;
        const int feature = it.key().toInt(&ok);
        if (!ok || feature < 0 || feature >= width || QString::number(feature) != it.key())
            refuseScan(path, QStringLiteral("feature \"%1\" is not one of the SAE's %2")
                                 .arg(it.key().left(20))
                                 .arg(width));
        const QJsonArray entries = it.value().toArray();
        if (entries.size() > contexts)
            refuseScan(path, QStringLiteral("feature %1 keeps more than %2 contexts")
                                 .arg(feature)
                                 .arg(contexts));
        std::vector<FeatureContext>& kept = scan.top[std::size_t(feature)];
        for (const QJsonValue& entry : entries)
            kept.push_back(contextFrom(entry, path));
        std::sort(kept.begin(), kept.end(), strongerContext);
    }
    return scan;
}

FeatureScan mergeFeatureScans(const std::vector<FeatureScan>& shards, const QStringList& paths) {
    if (shards.empty()) throw FeatureScanError("no feature scans to merge");
    const FeatureScan& first = shards.front();
    const std::size_t count = first.place.count;
    std::set<std::size_t> seen;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const QString name = QFileInfo(paths.value(int(i))).fileName();
        if (shards[i].settings != first.settings || shards[i].place.count != count)
            throw FeatureScanError(QStringLiteral("%1 and %2 are not shards of one scan (their "
                                                  "settings differ)")
                                       .arg(QFileInfo(paths.value(0)).fileName(), name)
                                       .toStdString());
        if (!seen.insert(shards[i].place.index).second)
            throw FeatureScanError(QStringLiteral("shard %1/%2 is given twice (%3)")
                                       .arg(shards[i].place.index)
                                       .arg(count)
                                       .arg(name)
                                       .toStdString());
    }
    if (seen.size() != count)
        throw FeatureScanError(QStringLiteral("%1 of %2 shards given: each of 0/%2 to %3/%2 is "
                                              "needed once")
                                   .arg(seen.size())
                                   .arg(count)
                                   .arg(count - 1)
                                   .toStdString());
    std::vector<const FeatureScan*> ordered;
    for (const FeatureScan& shard : shards)
        ordered.push_back(&shard);
    std::sort(ordered.begin(), ordered.end(), [](const FeatureScan* a, const FeatureScan* b) {
        return a->place.index < b->place.index;
    });
    FeatureScan merged =
        emptyFeatureScan(int(first.fired.size()), first.contexts(), first.settings);
    for (const FeatureScan* shard : ordered) {
        merged.texts += shard->texts;
        merged.tokens += shard->tokens;
        merged.failed << shard->failed;
        for (std::size_t f = 0; f < merged.fired.size(); ++f) {
            merged.fired[f] += shard->fired[f];
            for (const FeatureContext& context : shard->top[f])
                keepStrongest(merged.top[f], context, merged.contexts());
        }
    }
    return merged;
}
} // namespace headlight::app
