#pragma once
// The golden checkpoints written by tools/golden/make_goldens.py (PyTorch, from Hugging Face's
// model semantics): tests/data/models/<name>/{config.json, weights, tokenizer files, golden.json,
// golden/<case>.safetensors}. Tests compare the engine against them within 1e-4.

#include "compare.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "tensor/tensor.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <QTest>
#include <cmath>
#include <string>
#include <vector>

namespace headlight::test {

constexpr double kGoldenTolerance = 1e-4;

struct GoldenCase {
    QString model;  // folder name, e.g. "bert"
    QString folder; // absolute path of the checkpoint folder
    QJsonObject json;
    QString name() const { return json["name"].toString(); }
    QString tensorsPath() const { return folder + "/golden/" + name() + ".safetensors"; }
    std::vector<int32_t> ints(const char* key) const {
        std::vector<int32_t> values;
        for (const QJsonValue& v : json[key].toArray())
            values.push_back(v.toInt());
        return values;
    }
};

// "2,10,11,3": ids and masks as `headlight inspect` takes them on the command line.
inline QString joined(const std::vector<int32_t>& values) {
    QStringList parts;
    for (int32_t v : values)
        parts << QString::number(v);
    return parts.join(',');
}

// The `headlight inspect` options that give the CLI this case's input: its ids, token types and
// mask, or its text (and text pair, and whether special tokens are added).
inline QStringList inspectInputArgs(const GoldenCase& golden) {
    if (golden.json["input"].toString() == "ids")
        return {"--ids",
                joined(golden.ints("ids")),
                "--token-type-ids",
                joined(golden.ints("token_type_ids")),
                "--attention-mask",
                joined(golden.ints("attention_mask"))};
    QStringList args{"--text", golden.json["text"].toString()};
    if (golden.json.contains("text_pair"))
        args << "--text-pair" << golden.json["text_pair"].toString();
    if (!golden.json["add_special_tokens"].toBool(true)) args << "--no-special-tokens";
    return args;
}

inline QString goldenRoot() {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/models");
}

// Every case of every golden model; fails the calling test when there are none.
inline std::vector<GoldenCase> goldenCases() {
    std::vector<GoldenCase> cases;
    const QDir root(goldenRoot());
    for (const QString& model : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        QFile file(root.filePath(model + "/golden.json"));
        if (!file.open(QIODevice::ReadOnly)) continue;
        const QJsonObject doc = QJsonDocument::fromJson(file.readAll()).object();
        for (const QJsonValue& c : doc["cases"].toArray())
            cases.push_back({model, root.filePath(model), c.toObject()});
    }
    return cases;
}

// A case of a golden set kept beside the models (tests/data/SET/golden.json, e.g. output,
// query_key): the golden model it runs and its ids, token types and attention mask.
struct GoldenSetCase {
    QJsonObject json;
    QString name() const { return json["name"].toString(); }
    std::string folder() const {
        return (goldenRoot() + "/" + json["model"].toString()).toStdString();
    }
    ModelInput input() const {
        ModelInput in;
        for (const QJsonValue& v : json["ids"].toArray())
            in.ids.push_back(v.toInt());
        for (const QJsonValue& v : json["token_type_ids"].toArray())
            in.tokenTypes.push_back(v.toInt());
        for (const QJsonValue& v : json["attention_mask"].toArray())
            in.attentionMask.push_back(v.toInt() != 0);
        return in;
    }
};

// Every case of tests/data/SET/golden.json; none when the file is missing.
inline std::vector<GoldenSetCase> goldenSetCases(const QString& set) {
    QFile file(QStringLiteral(HEADLIGHT_TEST_DATA "/") + set + QStringLiteral("/golden.json"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    std::vector<GoldenSetCase> cases;
    for (const QJsonValue& c : QJsonDocument::fromJson(file.readAll()).object()["cases"].toArray())
        cases.push_back({c.toObject()});
    return cases;
}

// The last case of golden model `model`; an empty folder when there is none.
inline GoldenCase goldenCaseOf(const QString& model) {
    GoldenCase golden;
    for (const GoldenCase& c : goldenCases())
        if (c.model == model) golden = c;
    return golden;
}

// The model input a golden file was computed on: its ids, token types and attention mask.
inline ModelInput goldenInput(const io::SafetensorsFile& expected) {
    ModelInput input;
    for (int64_t id : expected.loadI64("input_ids"))
        input.ids.push_back(int32_t(id));
    for (int64_t t : expected.loadI64("token_type_ids"))
        input.tokenTypes.push_back(int32_t(t));
    for (int64_t m : expected.loadI64("attention_mask"))
        input.attentionMask.push_back(m != 0);
    return input;
}
} // namespace headlight::test
