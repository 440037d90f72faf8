#include "corpus_shard.h"

#include "io/safetensors.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <algorithm>
#include <cstring>

namespace headlight::app {
namespace {

constexpr const char* kHeaderKey = "headlight.corpus_shard";
constexpr const char* kFormat = "headlight-corpus-shard";
constexpr int kFormatVersion = 1;

[[noreturn]] void failShard(const QString& path, const QString& reason) {
    throw CorpusShardError(QStringLiteral("%1: %2").arg(path, reason).toStdString());
}

io::TensorToWrite int64Tensor(const std::string& name, const std::vector<int64_t>& values) {
    // Why stored bytes and not TensorToWrite::i64: an empty i64 list would be written as F32.
    io::TensorToWrite tensor{name, {int64_t(values.size())}, {}, {}, io::DType::I64, {}};
    tensor.stored.resize(values.size() * sizeof(int64_t));
    if (!values.empty()) std::memcpy(tensor.stored.data(), values.data(), tensor.stored.size());
    return tensor;
}

std::string tensorName(const QString& model, const char* statistic, const char* part) {
    return (model + QLatin1Char('.') + QLatin1String(statistic) + QLatin1Char('.') +
            QLatin1String(part))
        .toStdString();
}

// One statistic's sample -> its five tensors: per head the values seen and kept, then every kept
// value's key (the uint64 bits as int64), corpus position and value, head by head.
void addSampleTensors(std::vector<io::TensorToWrite>& tensors, const QString& model,
                      const char* statistic, const analysis::KeyedSample& sample) {
    std::vector<int64_t> seen, kept, keys, positions;
    std::vector<float> values;
    for (std::size_t head = 0; head < sample.kept.size(); ++head) {
        seen.push_back(int64_t(sample.seen[head]));
        kept.push_back(int64_t(sample.kept[head].size()));
        for (const analysis::KeyedValue& v : sample.kept[head]) {
            keys.push_back(int64_t(v.key));
            positions.push_back(int64_t(v.position));
            values.push_back(v.value);
        }
    }
    tensors.push_back(int64Tensor(tensorName(model, statistic, "seen"), seen));
    tensors.push_back(int64Tensor(tensorName(model, statistic, "kept"), kept));
    tensors.push_back(int64Tensor(tensorName(model, statistic, "keys"), keys));
    tensors.push_back(int64Tensor(tensorName(model, statistic, "positions"), positions));
    io::TensorToWrite valueTensor{
        tensorName(model, statistic, "values"), {int64_t(values.size())}, values, {}, {}, {}};
    tensors.push_back(std::move(valueTensor));
}

QJsonObject modelHeader(const ShardModel& model) {
    const PooledCorpus& corpus = model.corpus;
    const analysis::CorpusAccumulator& pooled = corpus.pooled.accumulated;
    QJsonArray errors;
    for (const analysis::CorpusError& error : corpus.pooled.errors)
        errors.append(QJsonObject{{"index", qint64(error.index)},
                                  {"message", QString::fromStdString(error.message)}});
    return {{"name", model.name},
            {"files", model.files},
            {"layers", qint64(pooled.entropySample().layers)},
            {"heads", qint64(pooled.entropySample().heads)},
            {"texts", qint64(pooled.textCount())},
            {"attempted", qint64(corpus.pooled.attempted)},
            {"longest", qint64(corpus.longest)},
            {"first_labels", QJsonArray::fromStringList(corpus.firstLabels)},
            {"first_labels_index", qint64(corpus.firstLabelsIndex)},
            {"errors", errors}};
}

// The settings' "sample_cap" and "sample_seed" -> the sampling options.
analysis::CorpusOptions samplingOptions(const QJsonObject& settings) {
    return {std::size_t(settings.value("sample_cap").toInteger()),
            uint64_t(settings.value("sample_seed").toString().toULongLong())};
}

struct ShardReader {
    const QString& path;
    const io::SafetensorsFile& file;

    std::vector<int64_t> integers(const std::string& name, std::size_t expected) const {
        if (!file.contains(name)) failShard(path, "no tensor " + QString::fromStdString(name));
        std::vector<int64_t> values = file.loadI64(name);
        if (values.size() != expected)
            failShard(path, QStringLiteral("tensor %1 has %2 values, expected %3")
                                .arg(QString::fromStdString(name))
                                .arg(values.size())
                                .arg(expected));
        return values;
    }

    analysis::KeyedSample sample(const QString& model, const char* statistic, int64_t rows,
                                 int64_t heads) const {
        const auto count = std::size_t(rows * heads);
        const std::vector<int64_t> seen = integers(tensorName(model, statistic, "seen"), count);
        const std::vector<int64_t> kept = integers(tensorName(model, statistic, "kept"), count);
        std::size_t total = 0;
        for (int64_t k : kept) {
            if (k < 0) failShard(path, "a negative count of kept values");
            total += std::size_t(k);
        }
        const auto keys = integers(tensorName(model, statistic, "keys"), total);
        const auto positions = integers(tensorName(model, statistic, "positions"), total);
        const std::string valuesName = tensorName(model, statistic, "values");
        if (!file.contains(valuesName))
            failShard(path, "no tensor " + QString::fromStdString(valuesName));
        const Tensor values = file.loadF32(valuesName);
        if (std::size_t(values.size()) != total)
            failShard(path, "tensor " + QString::fromStdString(valuesName) +
                                " does not match its counts");
        analysis::KeyedSample sample{
            rows, heads, {}, std::vector<std::vector<analysis::KeyedValue>>(count)};
        std::size_t next = 0;
        for (std::size_t head = 0; head < count; ++head) {
            sample.seen.push_back(uint64_t(seen[head]));
            for (int64_t i = 0; i < kept[head]; ++i, ++next)
                sample.kept[head].push_back(
                    {uint64_t(keys[next]), uint64_t(positions[next]), values.data()[next]});
        }
        return sample;
    }

    ShardModel model(const QJsonObject& header, const analysis::CorpusOptions& options) const {
        ShardModel model;
        model.name = header.value("name").toString();
        model.files = header.value("files").toObject();
        if (model.name.isEmpty()) failShard(path, "a model without a name");
        const int64_t layers = header.value("layers").toInteger(-1);
        const int64_t heads = header.value("heads").toInteger(-1);
        if (layers < 0 || heads < 0 || layers > 100000 || heads > 100000)
            failShard(path, "model " + model.name + " has no valid layer and head counts");
        PooledCorpus& corpus = model.corpus;
        try {
            corpus.pooled.accumulated = analysis::CorpusAccumulator(
                options, sample(model.name, "entropy", layers, heads),
                sample(model.name, "jsd", std::max<int64_t>(layers - 1, 0), heads),
                std::size_t(header.value("texts").toInteger()));
        } catch (const std::invalid_argument& error) {
            failShard(path, "model " + model.name + ": " + error.what());
        }
        corpus.pooled.attempted = std::size_t(header.value("attempted").toInteger());
        for (const QJsonValue& error : header.value("errors").toArray())
            corpus.pooled.errors.push_back(
                {std::size_t(error.toObject().value("index").toInteger()),
                 error.toObject().value("message").toString().toStdString()});
        corpus.longest = std::max<int64_t>(header.value("longest").toInteger(), 2);
        for (const QJsonValue& label : header.value("first_labels").toArray())
            corpus.firstLabels << label.toString();
        corpus.firstLabelsIndex = std::size_t(header.value("first_labels_index").toInteger());
        return model;
    }
};

QJsonObject readHeader(const QString& path, const io::SafetensorsFile& file) {
    const auto found = file.metadata().find(kHeaderKey);
    if (found == file.metadata().end())
        failShard(path, "not a Headlight corpus shard (no headlight.corpus_shard metadata)");
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromStdString(found->second));
    const QJsonObject header = document.object();
    if (header.value("format").toString() != QLatin1String(kFormat))
        failShard(path, "not a Headlight corpus shard (its header names no shard format)");
    if (header.value("version").toInt() != kFormatVersion)
        failShard(path, QStringLiteral("shard format version %1; this Headlight reads %2")
                            .arg(header.value("version").toInt())
                            .arg(kFormatVersion));
    return header;
}

// The first setting in which `shard` differs from `first`, or empty.
QString differingSetting(const QJsonObject& first, const QJsonObject& shard) {
    QStringList keys = first.keys() + shard.keys();
    keys.removeDuplicates();
    for (const QString& key : keys)
        if (first.value(key) != shard.value(key)) return key;
    return {};
}

void checkSameRun(const CorpusShard& first, const QString& firstPath, const CorpusShard& shard,
                  const QString& path) {
    const auto refuse = [&](const QString& what) {
        throw CorpusShardError(QStringLiteral("%1 and %2 are not shards of one run: %3")
                                   .arg(firstPath, path, what)
                                   .toStdString());
    };
    if (const QString key = differingSetting(first.settings, shard.settings); !key.isEmpty())
        refuse(QStringLiteral("their %1 differs").arg(key));
    if (first.models.size() != shard.models.size()) refuse("their models differ");
    for (std::size_t m = 0; m < first.models.size(); ++m) {
        if (first.models[m].name != shard.models[m].name) refuse("their models differ");
        if (first.models[m].files != shard.models[m].files)
            refuse("the files of model " + first.models[m].name + " differ");
    }
}

// Shards -> each index 0..n-1 given exactly once, by the position in `shards`.
std::vector<std::size_t> byIndex(const std::vector<CorpusShard>& shards, const QStringList& paths) {
    const std::size_t count = shards.front().place.count;
    std::vector<std::size_t> order(count, shards.size());
    for (std::size_t s = 0; s < shards.size(); ++s) {
        std::size_t& slot = order[shards[s].place.index];
        if (slot != shards.size())
            throw CorpusShardError(QStringLiteral("shard %1/%2 is given twice: %3 and %4")
                                       .arg(shards[s].place.index)
                                       .arg(count)
                                       .arg(paths[int(slot)], paths[int(s)])
                                       .toStdString());
        slot = s;
    }
    QStringList missing;
    for (std::size_t i = 0; i < count; ++i)
        if (order[i] == shards.size()) missing << QStringLiteral("%1/%2").arg(i).arg(count);
    if (!missing.isEmpty())
        throw CorpusShardError(
            ("missing shard" + QString(missing.size() > 1 ? "s " : " ") + missing.join(", "))
                .toStdString());
    return order;
}

void mergeModel(PooledCorpus& into, const PooledCorpus& shard) {
    into.pooled.accumulated.merge(shard.pooled.accumulated);
    into.pooled.attempted += shard.pooled.attempted;
    into.pooled.errors.insert(into.pooled.errors.end(), shard.pooled.errors.begin(),
                              shard.pooled.errors.end());
    into.longest = std::max(into.longest, shard.longest);
    const bool earlier =
        !shard.firstLabels.isEmpty() &&
        (into.firstLabels.isEmpty() || shard.firstLabelsIndex < into.firstLabelsIndex);
    if (earlier) {
        into.firstLabels = shard.firstLabels;
        into.firstLabelsIndex = shard.firstLabelsIndex;
    }
}
} // namespace

ShardPlace parseShardPlace(const QString& text) {
    static const QRegularExpression form(QStringLiteral("^(\\d{1,6})/(\\d{1,6})$"));
    const QRegularExpressionMatch match = form.match(text);
    if (!match.hasMatch())
        throw std::invalid_argument("--shard takes i/n, such as 0/4 (i counts from 0); not '" +
                                    text.toStdString() + "'");
    const ShardPlace place{match.captured(1).toULongLong(), match.captured(2).toULongLong()};
    if (place.count == 0 || place.index >= place.count)
        throw std::invalid_argument("--shard " + text.toStdString() +
                                    ": i must be at least 0 and below n (i counts from 0)");
    return place;
}

std::pair<std::size_t, std::size_t> shardTexts(ShardPlace place, std::size_t total) {
    return {place.index * total / place.count, (place.index + 1) * total / place.count};
}

void writeCorpusShard(const QString& path, const CorpusShard& shard) {
    std::vector<io::TensorToWrite> tensors;
    QJsonArray models;
    for (const ShardModel& model : shard.models) {
        addSampleTensors(tensors, model.name, "entropy",
                         model.corpus.pooled.accumulated.entropySample());
        addSampleTensors(tensors, model.name, "jsd", model.corpus.pooled.accumulated.jsdSample());
        models.append(modelHeader(model));
    }
    const QJsonObject header{{"format", kFormat},
                             {"version", kFormatVersion},
                             {"shard", qint64(shard.place.index)},
                             {"shards", qint64(shard.place.count)},
                             {"settings", shard.settings},
                             {"made", shard.made},
                             {"models", models}};
    try {
        io::writeSafetensors(
            path.toStdString(), tensors,
            {{kHeaderKey, QJsonDocument(header).toJson(QJsonDocument::Compact).toStdString()}});
    } catch (const std::exception& error) {
        throw CorpusShardError(error.what());
    }
}

CorpusShard readCorpusShard(const QString& path) {
    try {
        const io::SafetensorsFile file(path.toStdString());
        const QJsonObject header = readHeader(path, file);
        CorpusShard shard;
        shard.place = {std::size_t(header.value("shard").toInteger(-1)),
                       std::size_t(header.value("shards").toInteger(0))};
        if (header.value("shard").toInteger(-1) < 0 || shard.place.count == 0 ||
            shard.place.index >= shard.place.count)
            failShard(path, "its shard index is not below its shard count");
        shard.settings = header.value("settings").toObject();
        shard.made = header.value("made").toObject();
        const ShardReader reader{path, file};
        for (const QJsonValue& model : header.value("models").toArray())
            shard.models.push_back(reader.model(model.toObject(), samplingOptions(shard.settings)));
        return shard;
    } catch (const io::CheckpointError& error) {
        throw CorpusShardError(error.what());
    }
}

CorpusShard mergeCorpusShards(const std::vector<CorpusShard>& shards, const QStringList& paths) {
    if (shards.empty()) throw CorpusShardError("no shards to merge");
    for (std::size_t s = 1; s < shards.size(); ++s) {
        if (shards[s].place.count != shards[0].place.count)
            throw CorpusShardError(QStringLiteral("%1 and %2 are not shards of one run: one of "
                                                  "%3 shards and one of %4")
                                       .arg(paths[0], paths[int(s)])
                                       .arg(shards[0].place.count)
                                       .arg(shards[s].place.count)
                                       .toStdString());
        checkSameRun(shards[0], paths[0], shards[s], paths[int(s)]);
    }
    CorpusShard merged{{0, 1}, shards[0].settings, shards[0].made, {}};
    for (const ShardModel& model : shards[0].models)
        merged.models.push_back(ShardModel{model.name, model.files, PooledCorpus{}});
    const auto options = samplingOptions(merged.settings);
    for (ShardModel& model : merged.models)
        model.corpus.pooled.accumulated = analysis::CorpusAccumulator(options);
    // Why by index: the error list and first labels then come out the same for any order given.
    for (std::size_t s : byIndex(shards, paths))
        for (std::size_t m = 0; m < merged.models.size(); ++m)
            mergeModel(merged.models[m].corpus, shards[s].models[m].corpus);
    for (ShardModel& model : merged.models) {
        model.corpus.pooled.total = std::size_t(merged.settings.value("corpus_texts").toInteger());
        model.corpus.stats = corpusStats(model.corpus.pooled.accumulated, model.corpus.longest,
                                         model.corpus.pooled.errors.size());
    }
    return merged;
}
} // namespace headlight::app
