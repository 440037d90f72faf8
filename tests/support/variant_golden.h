#pragma once
// The X-former variant goldens written by tools/golden/make_variant_goldens.py (float64 PyTorch
// reference, tools/golden/variant_reference.py): tests/data/variants/golden.json lists the cases
// (model folder, input, variant spec JSON, stored tensors) and golden/<case>.safetensors holds
// attentions [L,H,T,T], last_hidden_state [T,D] and the internals the engine reports with
// CaptureRequest::internals: pass-wide ones by name ("mask", "bias", ...), per-layer ones as
// "layer{l}.<name>".

#include "golden.h"
#include "io/safetensors.h"
#include "model/trace.h"
#include "model/transformer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <set>
#include <string>
#include <vector>

namespace headlight::test {

inline QString variantGoldenRoot() {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/variants");
}

inline QJsonObject variantGoldenDocument() {
    QFile file(variantGoldenRoot() + "/golden.json");
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

struct VariantGoldenCase {
    QJsonObject json;
    QString name() const { return json["name"].toString(); }
    QString folder() const {
        return QStringLiteral(HEADLIGHT_TEST_DATA "/") + json["model"].toString();
    }
    QString tensorsPath() const {
        return variantGoldenRoot() + "/golden/" + name() + ".safetensors";
    }
    std::string specJson() const {
        return QJsonDocument(json["spec"].toObject()).toJson(QJsonDocument::Compact).toStdString();
    }
    ModelInput input() const {
        ModelInput input;
        for (const QJsonValue& v : json["ids"].toArray())
            input.ids.push_back(v.toInt());
        for (const QJsonValue& v : json["token_type_ids"].toArray())
            input.tokenTypes.push_back(v.toInt());
        for (const QJsonValue& v : json["attention_mask"].toArray())
            input.attentionMask.push_back(v.toInt() != 0);
        return input;
    }
};

inline std::vector<VariantGoldenCase> variantGoldenCases() {
    std::vector<VariantGoldenCase> cases;
    for (const QJsonValue& c : variantGoldenDocument()["cases"].toArray())
        cases.push_back({c.toObject()});
    return cases;
}

// The internals the goldens model; the engine must report exactly these of them.
inline const std::set<std::string>& modelledPassInternals() {
    static const std::set<std::string> names{"nominal_mask", "mask", "bias", "span_mask"};
    return names;
}
inline const std::set<std::string>& modelledLayerInternals() {
    static const std::set<std::string> names{"residual_scores", "premix_logits",
                                             "premix_probabilities"};
    return names;
}

struct TensorDiff {
    std::string name;
    double maxAbs = 0.0;
    QString where;
};

// Every stored tensor of the case against the trace; `missing` gets what one side has and the
// other lacks (stored but not reported, or a modelled internal reported but not stored).
inline std::vector<TensorDiff>
compareVariantTrace(const Trace& trace, const VariantGoldenCase& golden, QStringList& missing) {
    const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
    std::vector<TensorDiff> diffs;
    for (const QJsonValue& v : golden.json["tensors"].toArray()) {
        const std::string name = v.toString().toStdString();
        const Tensor theirs = expected.loadF32(name);
        const Tensor* ours = nullptr;
        Tensor stacked;
        if (name == "attentions") {
            stacked = trace.stackedProbabilities();
            ours = &stacked;
        } else if (name == "last_hidden_state") {
            ours = &trace.lastHiddenState;
        } else if (name.rfind("layer", 0) == 0) {
            const std::size_t dot = name.find('.');
            const std::size_t layer = std::stoul(name.substr(5, dot - 5));
            const auto& internals = trace.layers.at(layer).internals;
            const auto found = internals.find(name.substr(dot + 1));
            if (found != internals.end()) ours = &found->second;
        } else {
            const auto found = trace.internals.find(name);
            if (found != trace.internals.end()) ours = &found->second;
        }
        if (!ours) {
            missing << QString::fromStdString(name);
            continue;
        }
        TensorDiff diff{name, 0.0, {}};
        diff.maxAbs = maxAbsDiff(*ours, theirs, &diff.where);
        diffs.push_back(diff);
    }
    std::set<std::string> stored;
    for (const QJsonValue& v : golden.json["tensors"].toArray())
        stored.insert(v.toString().toStdString());
    for (const auto& [name, tensor] : trace.internals)
        if (modelledPassInternals().count(name) && !stored.count(name))
            missing << QString::fromStdString(name) + " (reported, not in the golden)";
    for (std::size_t l = 0; l < trace.layers.size(); ++l)
        for (const auto& [name, tensor] : trace.layers[l].internals) {
            const std::string full = "layer" + std::to_string(l) + "." + name;
            if (modelledLayerInternals().count(name) && !stored.count(full))
                missing << QString::fromStdString(full) + " (reported, not in the golden)";
        }
    return diffs;
}

// One line for the log and a failure message: "attentions 3.1e-07, mask 0, ...".
inline QString describeDiffs(const std::vector<TensorDiff>& diffs) {
    QStringList parts;
    for (const TensorDiff& d : diffs)
        parts << QString("%1 %2").arg(QString::fromStdString(d.name)).arg(d.maxAbs, 0, 'g', 2);
    return parts.join(", ");
}

// Runs one case on `backend` and checks it within kGoldenTolerance.
inline void verifyVariantCase(Backend& backend, const VariantGoldenCase& golden) {
    const auto model = loadModel(golden.folder().toStdString(), backend);
    const variants::VariantSpec spec = variants::parseVariantSpec(golden.specJson());
    CaptureRequest capture;
    capture.internals = true;
    Trace trace;
    try {
        trace = model->forward(golden.input(), capture, spec);
    } catch (const std::exception& error) {
        QFAIL(qPrintable(QString("forward threw: ") + error.what()));
    }
    QStringList missing;
    const std::vector<TensorDiff> diffs = compareVariantTrace(trace, golden, missing);
    qInfo("%s: %s", qPrintable(golden.name()), qPrintable(describeDiffs(diffs)));
    QVERIFY2(missing.isEmpty(), qPrintable("internals differ: " + missing.join(", ")));
    for (const TensorDiff& d : diffs)
        QVERIFY2(d.maxAbs <= kGoldenTolerance,
                 qPrintable(QString::fromStdString(d.name) + " max |diff| " +
                            QString::number(d.maxAbs) + " at " + d.where));
}
} // namespace headlight::test
