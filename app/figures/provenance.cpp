#include "provenance.h"

#include "build_info.h"
#include "export/atomic_write.h"
#include "export/embedded_metadata.h"
#include "export/figure_data.h"
#include "io/safetensors.h"
#include "model_session.h"
#include "scene_files.h"

#include <QCryptographicHash>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace headlight::app {
namespace {

constexpr int kFormat = 1; // the JSON layout's version

QJsonObject hashesToJson(const FileHashes& hashes) {
    QJsonObject json;
    for (const auto& [file, sha] : hashes)
        json.insert(file, sha);
    return json;
}

// Reads the JSON keys strictly: a provenance that lost a field cannot vouch for a figure.
class Reader {
public:
    explicit Reader(const QJsonObject& json)
        : json_(json) {}
    QJsonValue value(const QString& key) const {
        if (!json_.contains(key)) fail(key, "is missing");
        return json_.value(key);
    }
    QString text(const QString& key) const {
        const QJsonValue v = value(key);
        if (!v.isString()) fail(key, "must be a string");
        return v.toString();
    }
    QJsonObject object(const QString& key) const {
        const QJsonValue v = value(key);
        if (!v.isObject()) fail(key, "must be an object");
        return v.toObject();
    }
    FileHashes hashes(const QString& key) const {
        FileHashes hashes;
        const QJsonObject files = object(key);
        for (auto it = files.begin(); it != files.end(); ++it) {
            if (!it->isString()) fail(key + "." + it.key(), "must be a string");
            hashes[it.key()] = it->toString();
        }
        return hashes;
    }
    [[noreturn]] static void fail(const QString& key, const char* problem) {
        throw ProvenanceError(("provenance: '" + key + "' ").toStdString() + problem);
    }

private:
    QJsonObject json_;
};

io::Scenario scenarioFrom(const QJsonObject& json) {
    try {
        io::SceneFields fields(json, "provenance", "scenario");
        // Why atlas here and not in scenes: an atlas figure records its scenario, but scenes
        // and lessons cannot show it (it is drawn by `export --view atlas` and the Atlas tab).
        io::SceneVocabulary vocabulary = sceneVocabulary();
        vocabulary.views.push_back("atlas");
        io::Scenario scenario = io::scenarioFromJson(fields, vocabulary);
        fields.finish();
        return scenario;
    } catch (const io::SceneError& error) {
        throw ProvenanceError(error.what());
    }
}

std::optional<QString> safetensorsProvenance(const QString& path) {
    try {
        const io::SafetensorsFile file(path.toStdString());
        const auto found = file.metadata().find(render::kProvenanceKey);
        if (found == file.metadata().end()) return std::nullopt;
        return QString::fromStdString(found->second);
    } catch (const std::runtime_error& error) {
        throw ProvenanceError(error.what());
    }
}
} // namespace

QString figureDataSha256(const render::PageContent& content) {
    try {
        const QByteArray csv = render::csvBytes(render::figureData(content).table);
        return QString::fromLatin1(
            QCryptographicHash::hash(csv, QCryptographicHash::Sha256).toHex());
    } catch (const render::ExportError&) {
        return {}; // an empty figure has no numbers
    }
}

Provenance describeExport(const LoadedModel& model, const io::Scenario& scenario,
                          const render::PageContent& content) {
    Provenance provenance;
    provenance.modelName = model.name();
    provenance.modelFolder = QFileInfo(model.folder).absoluteFilePath();
    provenance.files = hashModelFiles(model.folder);
    provenance.scenario = scenario;
    provenance.backend = QString::fromLatin1(backendName(model.backend->kind()));
    provenance.device = QString::fromStdString(model.backend->deviceName());
    provenance.version = headlightVersion();
    provenance.revision = buildRevision();
    provenance.dataSha256 = figureDataSha256(content);
    return provenance;
}

QJsonObject provenanceToJson(const Provenance& p) {
    QJsonObject json{{"format", kFormat},
                     {"headlight", QJsonObject{{"version", p.version}, {"revision", p.revision}}},
                     {"command", QJsonArray::fromStringList(p.command)},
                     {"command_line", shellCommandLine(p.command)},
                     {"model", QJsonObject{{"name", p.modelName},
                                           {"folder", p.modelFolder},
                                           {"weights", hashesToJson(p.files.weights)},
                                           {"tokenizer", hashesToJson(p.files.tokenizer)},
                                           {"config", hashesToJson(p.files.config)}}},
                     {"scenario", io::scenarioToJson(p.scenario)},
                     {"backend", p.backend},
                     {"device", p.device},
                     {"data_sha256", p.dataSha256}};
    if (p.corpus)
        json.insert("corpus", QJsonObject{{"file", p.corpus->path}, {"sha256", p.corpus->sha256}});
    return json;
}

Provenance provenanceFromJson(const QJsonObject& json) {
    const Reader top(json);
    if (top.value("format").toInt() != kFormat)
        Reader::fail("format", "is not 1, the only layout this Headlight reads");
    Provenance p;
    const Reader headlight(top.object("headlight"));
    p.version = headlight.text("version");
    p.revision = headlight.text("revision");
    const QJsonValue command = top.value("command");
    if (!command.isArray()) Reader::fail("command", "must be an array of strings");
    for (const QJsonValue& word : command.toArray()) {
        if (!word.isString()) Reader::fail("command", "must be an array of strings");
        p.command << word.toString();
    }
    const Reader model(top.object("model"));
    p.modelName = model.text("name");
    p.modelFolder = model.text("folder");
    p.files = {model.hashes("weights"), model.hashes("tokenizer"), model.hashes("config")};
    p.scenario = scenarioFrom(top.object("scenario"));
    if (json.contains("corpus")) {
        const Reader corpus(top.object("corpus"));
        p.corpus = CorpusFile{corpus.text("file"), corpus.text("sha256")};
    }
    p.backend = top.text("backend");
    p.device = top.text("device");
    p.dataSha256 = top.text("data_sha256");
    return p;
}

QString shellCommandLine(const QStringList& command) {
    static const QRegularExpression plain(QStringLiteral(R"(^[A-Za-z0-9_./:=@%+,-]+$)"));
    QStringList words{QStringLiteral("headlight")};
    for (const QString& word : command)
        words << (plain.match(word).hasMatch()
                      ? word
                      : QLatin1Char('\'') + QString(word).replace("'", R"('\'')") +
                            QLatin1Char('\''));
    return words.join(QLatin1Char(' '));
}

std::optional<Provenance> readProvenance(const QString& path) {
    const bool tensors = QFileInfo(path).suffix().toLower() == QLatin1String("safetensors");
    const std::optional<QString> text =
        tensors ? safetensorsProvenance(path) : render::readEmbeddedProvenance(path);
    if (!text) return std::nullopt;
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(text->toUtf8(), &error);
    if (!document.isObject())
        throw ProvenanceError("provenance: not a JSON object (" +
                              error.errorString().toStdString() + ")");
    return provenanceFromJson(document.object());
}
} // namespace headlight::app
