#include "model/config_reader.h"

#include <QJsonArray>
#include <QLocale>
#include <cmath>
#include <limits>

namespace headlight {
namespace {

struct ActivationName {
    const char* name;
    Activation activation;
};

// HF's ACT2FN names whose function Headlight computes exactly.
constexpr ActivationName kActivations[] = {
    {"gelu", Activation::Gelu},
    {"gelu_new", Activation::GeluTanh},
    {"gelu_pytorch_tanh", Activation::GeluTanh},
    {"relu", Activation::Relu},
    {"silu", Activation::Silu},
    {"swish", Activation::Silu},
};

std::string supportedActivations() {
    std::string list;
    for (const auto& names : kActivations)
        list += (list.empty() ? "" : ", ") + std::string(names.name);
    return list;
}

std::string ropeType(const QJsonObject& rope) {
    const QJsonValue type =
        rope.contains("rope_type") ? rope.value("rope_type") : rope.value("type");
    return type.isString() ? type.toString().toStdString() : "";
}
} // namespace

void ConfigReader::fail(const std::string& problem) const {
    throw io::CheckpointError(source_ + ": " + problem);
}

int ConfigReader::requiredInt(const char* key, int min, int max) const {
    if (!has(key)) fail(std::string("missing '") + key + "'");
    return intIn(key, min, max);
}

int ConfigReader::intOr(const char* key, int fallback, int min, int max) const {
    return has(key) ? intIn(key, min, max) : fallback;
}

double ConfigReader::positiveNumberOr(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    const QJsonValue v = value(key);
    if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() <= 0)
        fail(std::string(key) + " must be a positive number, not " + describe(v));
    return v.toDouble();
}

float ConfigReader::positiveFloatOr(const char* key, double fallback) const {
    const double number = positiveNumberOr(key, fallback);
    if (number < std::numeric_limits<float>::min() || number > std::numeric_limits<float>::max())
        fail(std::string(key) + " " + describe(value(key)) +
             " is out of range for a 32-bit float (1.2e-38 to 3.4e+38)");
    return static_cast<float>(number);
}

bool ConfigReader::boolOr(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!value(key).isBool())
        fail(std::string(key) + " must be true or false, not " + describe(value(key)));
    return value(key).toBool();
}

std::string ConfigReader::stringOr(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!value(key).isString())
        fail(std::string(key) + " must be a string, not " + describe(value(key)));
    return value(key).toString().toStdString();
}

std::string ConfigReader::describe(const QJsonValue& v) {
    if (v.isString()) return "\"" + v.toString().left(60).toStdString() + "\"";
    if (v.isBool()) return v.toBool() ? "true" : "false";
    if (v.isNull()) return "null";
    if (v.isArray()) return "an array";
    if (v.isObject()) return "an object";
    const double number = v.toDouble();
    if (number == std::trunc(number) && std::fabs(number) < 1e15)
        return std::to_string(static_cast<long long>(number));
    return QString::number(number, 'g', QLocale::FloatingPointShortest).toStdString();
}

int ConfigReader::intIn(const char* key, int min, int max) const {
    const QJsonValue v = value(key);
    const double number = v.toDouble();
    if (!v.isDouble() || !std::isfinite(number) || number != std::trunc(number))
        fail(std::string(key) + " must be an integer, not " + describe(v));
    if (number < min || number > max)
        fail(std::string(key) + " " + describe(v) + " is out of range (" + std::to_string(min) +
             " to " + std::to_string(max) + ")");
    return static_cast<int>(number);
}

Activation readActivation(const ConfigReader& config, const char* key, const char* fallback) {
    const std::string name = config.stringOr(key, fallback);
    for (const auto& entry : kActivations)
        if (name == entry.name) return entry.activation;
    config.fail(std::string(key) + " '" + name +
                "' is not supported (supported: " + supportedActivations() + ")");
}

void readPadToken(const ConfigReader& config, ModelSpec& spec, int fallback) {
    if (config.value("pad_token_id").isNull()) {
        spec.padTokenId = -1;
        return;
    }
    spec.padTokenId = config.intOr("pad_token_id", fallback, std::numeric_limits<int>::min(),
                                   std::numeric_limits<int>::max());
    if (spec.padTokenId < 0) spec.padTokenId = -1; // some configs write -1 for "none"
}

// Older configs write rope_theta and rope_scaling; transformers 5 folds both into
// rope_parameters {rope_type, rope_theta, ...}. A "default" type there means no scaling.
void readRope(const ConfigReader& config, ModelSpec& spec) {
    spec.ropeTheta = config.positiveNumberOr("rope_theta", 10000.0);
    if (config.has("rope_scaling")) {
        const QJsonValue scaling = config.value("rope_scaling");
        if (!scaling.isObject() || ropeType(scaling.toObject()) != "default")
            config.fail("rope_scaling is not supported (type '" +
                        (scaling.isObject() ? ropeType(scaling.toObject()) : std::string()) +
                        "'); only plain RoPE is implemented");
    }
    if (!config.has("rope_parameters")) return;
    const QJsonValue parameters = config.value("rope_parameters");
    if (!parameters.isObject()) config.fail("rope_parameters must be an object");
    const QJsonObject rope = parameters.toObject();
    const std::string type = ropeType(rope);
    if (!type.empty() && type != "default")
        config.fail("rope_parameters type '" + type +
                    "' is not supported (rope scaling); only plain RoPE is implemented");
    if (!rope.contains("rope_theta")) return;
    const double theta = rope.value("rope_theta").toDouble();
    if (!rope.value("rope_theta").isDouble() || !std::isfinite(theta) || theta <= 0)
        config.fail("rope_parameters rope_theta must be a positive number, not " +
                    ConfigReader::describe(rope.value("rope_theta")));
    spec.ropeTheta = theta;
}
} // namespace headlight
