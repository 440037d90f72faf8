#pragma once
// ConfigReader: typed access to config.json keys for the model families (core/model/families/).
// Every failure names the source file and the key, so a bad config fails in one line.

#include "io/safetensors.h"
#include "model/model_spec.h"

#include <QJsonObject>
#include <QJsonValue>
#include <string>

namespace headlight {

// Bounds that no real model comes near; past them a config is corrupt or hostile, and trusting
// it would mean allocating absurd tables.
constexpr int kMaxLayers = 10'000;
constexpr int kMaxHidden = 1'000'000;
constexpr int kMaxVocab = 10'000'000;
constexpr int kMaxPositions = 10'000'000;
constexpr int kMaxHeads = 100'000;
constexpr int kMaxIntermediate = 10'000'000;
constexpr int kMaxTypeVocab = 1'000'000;

class ConfigReader {
public:
    ConfigReader(const QJsonObject& json, std::string source)
        : json_(json)
        , source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& problem) const;
    // Present and not null. A null reads as absence: for the optional keys read with a fallback
    // HF's default is None or means the same (n_inner, head_dim, num_key_value_heads), so the two
    // agree; where a null means something else (pad_token_id, Mistral's sliding_window) the
    // caller looks at the value itself first.
    bool has(const char* key) const { return json_.contains(key) && !json_.value(key).isNull(); }
    QJsonValue value(const char* key) const { return json_.value(key); }

    int requiredInt(const char* key, int min, int max) const;
    int intOr(const char* key, int fallback, int min, int max) const;
    double positiveNumberOr(const char* key, double fallback) const;
    // A norm's eps is used as a float. Why the range check: a double such as 1e-196 rounds to 0
    // there (the norm then divides by zero on a constant row) and 1e39 overflows to inf (and the
    // conversion itself is undefined behaviour).
    float positiveFloatOr(const char* key, double fallback) const;
    bool boolOr(const char* key, bool fallback) const;
    std::string stringOr(const char* key, const std::string& fallback) const;

    static std::string describe(const QJsonValue& v);

private:
    int intIn(const char* key, int min, int max) const;

    QJsonObject json_;
    std::string source_;
};

// hidden_act-style keys: HF's ACT2FN names whose function Headlight computes exactly.
Activation readActivation(const ConfigReader& config, const char* key, const char* fallback);
// pad_token_id: an explicit null means "no pad token" (HF passes None through); only absence
// takes the default; a negative id means none too.
void readPadToken(const ConfigReader& config, ModelSpec& spec, int fallback);
// Plain RoPE: rope_theta, and rope_scaling / rope_parameters refused unless "default".
void readRope(const ConfigReader& config, ModelSpec& spec);
} // namespace headlight
