// config.json → ModelSpec. Key names and defaults follow Hugging Face transformers'
// configuration_<model>.py, so a config means here what it means there; each family reads its
// own keys (core/model/families/). One deliberate difference: the sizes that fix tensor shapes
// (vocabulary, width, depth, heads, MLP width, learned position and token-type tables) must be
// written out. save_pretrained always writes them, and silently assuming HF's 7B-sized defaults
// would only turn a broken config into a confusing shape mismatch later.
#include "model/model_spec.h"

#include "model/config_reader.h"
#include "model/model_family.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstring>

namespace headlight {
namespace {
using io::CheckpointError;

constexpr qint64 kMaxConfigBytes = 16'000'000;

// A model class of the family: "<Prefix>Model", "<Prefix>For<Task>", "<Prefix>LMHeadModel" or
// "<Prefix>DoubleHeadsModel". Anything else after the prefix is another model ("Qwen2Moe...",
// "RobertaPreLayerNorm...") and must not match.
bool isClassOf(const std::string& className, const char* prefix) {
    const std::size_t prefixLength = std::strlen(prefix);
    if (className.compare(0, prefixLength, prefix) != 0) return false;
    const std::string rest = className.substr(prefixLength);
    return rest == "Model" || rest == "LMHeadModel" || rest == "DoubleHeadsModel" ||
           (rest.starts_with("For") && rest.size() > 3);
}

const ModelFamily& detectFamily(const ConfigReader& config, ModelSpec& spec) {
    const QJsonValue classes = config.value("architectures");
    if (classes.isArray() && !classes.toArray().isEmpty() && classes.toArray().at(0).isString())
        spec.architectureClass = classes.toArray().at(0).toString().toStdString();
    spec.modelType = config.stringOr("model_type", "");
    if (!spec.modelType.empty()) {
        for (const ModelFamily* family : modelFamilies())
            if (spec.modelType == family->modelType) return *family;
        if (const char* reason = refusalReason(spec.modelType)) config.fail(reason);
        config.fail("unsupported architecture '" + spec.modelType +
                    "' (supported: " + supportedModelTypes() + ")");
    }
    if (spec.architectureClass.empty())
        config.fail("neither model_type nor architectures says which architecture this is");
    for (const ModelFamily* family : modelFamilies())
        if (isClassOf(spec.architectureClass, family->classPrefix)) return *family;
    config.fail("unsupported architecture '" + spec.architectureClass +
                "' (supported: " + supportedModelTypes() + ")");
}

void checkHeads(const ConfigReader& config, ModelSpec& spec, const char* hiddenKey,
                const char* headsKey) {
    if (spec.headDim == 0) {
        if (spec.hidden % spec.heads != 0)
            config.fail(std::string(hiddenKey) + " " + std::to_string(spec.hidden) +
                        " is not divisible by " + headsKey + " " + std::to_string(spec.heads));
        spec.headDim = spec.hidden / spec.heads;
    }
    if (spec.kvHeads == 0) spec.kvHeads = spec.heads;
    if (spec.kvHeads > spec.heads || spec.heads % spec.kvHeads != 0)
        config.fail(std::string(headsKey) + " " + std::to_string(spec.heads) +
                    " is not a multiple of num_key_value_heads " + std::to_string(spec.kvHeads));
}

QJsonObject parseObject(const std::string& jsonText, const std::string& sourceName) {
    QJsonParseError error;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromStdString(jsonText), &error);
    if (error.error != QJsonParseError::NoError)
        throw CheckpointError(sourceName + ": invalid JSON at byte " +
                              std::to_string(error.offset) + " (" +
                              error.errorString().toStdString() + ")");
    if (!document.isObject()) throw CheckpointError(sourceName + ": not a JSON object");
    return document.object();
}
} // namespace

const char* architectureName(Architecture arch) {
    for (const ModelFamily* family : modelFamilies())
        if (family->architecture == arch) return family->modelType;
    return "unknown";
}

ModelSpec parseModelConfig(const std::string& jsonText, const std::string& sourceName) {
    const ConfigReader config(parseObject(jsonText, sourceName), sourceName);
    ModelSpec spec;
    const ModelFamily& family = detectFamily(config, spec);
    spec.architecture = family.architecture;
    family.readConfig(config, spec);
    checkHeads(config, spec, family.hiddenKey, family.headsKey);
    return spec;
}

ModelSpec loadModelConfig(const std::string& folder) {
    const std::string path =
        QDir(QString::fromStdString(folder)).filePath("config.json").toStdString();
    QFile file(QString::fromStdString(path));
    if (!file.exists()) throw CheckpointError(path + ": file does not exist");
    if (!file.open(QIODevice::ReadOnly))
        throw CheckpointError(path + ": cannot open (" + file.errorString().toStdString() + ")");
    if (file.size() > kMaxConfigBytes)
        throw CheckpointError(path + ": larger than 16 MB, not a config");
    return parseModelConfig(file.readAll().toStdString(), path);
}
} // namespace headlight
