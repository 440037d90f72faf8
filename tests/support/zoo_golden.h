#pragma once
// The zoo-format goldens written by tools/zoo/make_zoo_goldens.py (float64 PyTorch, the model of
// tools/zoo/model.py; docs/zoo-format.md): tests/data/zoo/golden.json lists the cases (folder,
// input ids, stored tensors); each tests/data/zoo/<case>/ holds a `headlight` checkpoint
// (config.json, model.safetensors) and golden.safetensors with attentions [L,H,T,T] (ACT:
// [steps,H,T,T]), last_hidden_state [T,D], logits [T,V] through the tied head (compared with the
// engine's own, Trace::logits) and the format's internals: model-level ones by name
// (halting_probability, update_weight, ponder, remainder, reconstruction_error, funnel_length,
// funnel_merge), per-layer ones as "layer{l}.<name>" (router_logits, expert_choice,
// expert_weight); a funnel's maps, which differ in shape, as "layer{l}.attention" [H, T_q, T_k]
// instead of attentions.

#include "golden.h"
#include "io/safetensors.h"
#include "model/trace.h"
#include "model/transformer.h"
#include "variant_golden.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <memory>
#include <string>
#include <vector>

namespace headlight::test {

inline QJsonObject zooGoldenDocument() {
    QFile file(QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/golden.json"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

struct ZooGoldenCase {
    QJsonObject json;
    QString name() const { return json["name"].toString(); }
    QString folder() const {
        return QStringLiteral(HEADLIGHT_TEST_DATA "/") + json["folder"].toString();
    }
    QString tensorsPath() const { return folder() + "/golden.safetensors"; }
    ModelInput input() const {
        ModelInput input;
        for (const QJsonValue& v : json["ids"].toArray())
            input.ids.push_back(v.toInt());
        return input;
    }
};

inline std::vector<ZooGoldenCase> zooGoldenCases() {
    std::vector<ZooGoldenCase> cases;
    for (const QJsonValue& c : zooGoldenDocument()["cases"].toArray())
        cases.push_back({c.toObject()});
    return cases;
}

// The traced tensor a golden name stands for, or nullptr when the trace lacks it.
inline const Tensor* tracedTensor(const Trace& trace, const std::string& name, Tensor& scratch) {
    if (name == "attentions") {
        scratch = trace.stackedProbabilities();
        return &scratch;
    }
    if (name == "last_hidden_state") return &trace.lastHiddenState;
    if (name == "logits") return &trace.logits;
    if (name.rfind("layer", 0) == 0) {
        const std::size_t dot = name.find('.');
        const std::size_t layer = std::stoul(name.substr(5, dot - 5));
        if (layer >= trace.layers.size()) return nullptr;
        if (name.substr(dot + 1) == "attention") return &trace.layers[layer].probabilities;
        const auto& internals = trace.layers[layer].internals;
        const auto found = internals.find(name.substr(dot + 1));
        return found == internals.end() ? nullptr : &found->second;
    }
    const auto found = trace.internals.find(name);
    return found == trace.internals.end() ? nullptr : &found->second;
}

// Loads the checkpoint in `folder` on `backend`, runs `input` with every probability map and the
// internals captured, and checks each tensor named in `names` against `expectedPath`'s tensor
// `prefix` + name within kGoldenTolerance. "logits" are the model's own, through the output head
// the engine built from the checkpoint: a head the engine got wrong must fail here.
inline void verifyZooForward(Backend& backend, const QString& caseName, const QString& folder,
                             const ModelInput& input, const QJsonArray& names,
                             const QString& expectedPath, const std::string& prefix) {
    std::unique_ptr<TransformerModel> model;
    try {
        model = loadModel(folder.toStdString(), backend);
    } catch (const std::exception& error) {
        QFAIL(qPrintable(QString("loadModel threw: ") + error.what()));
    }
    CaptureRequest capture;
    capture.probabilities = true;
    capture.internals = true;
    for (const QJsonValue& v : names)
        capture.logits = capture.logits || v.toString() == QLatin1String("logits");
    Trace trace;
    try {
        trace = model->forward(input, capture);
    } catch (const std::exception& error) {
        QFAIL(qPrintable(QString("forward threw: ") + error.what()));
    }
    const io::SafetensorsFile expected(expectedPath.toStdString());
    std::vector<TensorDiff> diffs;
    QStringList missing;
    for (const QJsonValue& v : names) {
        const std::string name = v.toString().toStdString();
        Tensor scratch;
        const Tensor* ours = nullptr;
        try {
            ours = tracedTensor(trace, name, scratch);
        } catch (const std::exception& error) {
            missing << QString::fromStdString(name) + " (" + error.what() + ")";
            continue;
        }
        if (!ours) {
            missing << QString::fromStdString(name);
            continue;
        }
        TensorDiff diff{name, 0.0, {}};
        diff.maxAbs = maxAbsDiff(*ours, expected.loadF32(prefix + name), &diff.where);
        diffs.push_back(diff);
    }
    qInfo("%s: %s", qPrintable(caseName), qPrintable(describeDiffs(diffs)));
    QVERIFY2(missing.isEmpty(), qPrintable("not in the trace: " + missing.join(", ")));
    for (const TensorDiff& d : diffs)
        QVERIFY2(d.maxAbs <= goldenTolerance(QFileInfo(folder).fileName()),
                 qPrintable(QString::fromStdString(d.name) + " max |diff| " +
                            QString::number(d.maxAbs) + " at " + d.where));
}

// One case of tests/data/zoo: its checkpoint, ids and stored tensors.
inline void verifyZooCase(Backend& backend, const ZooGoldenCase& golden) {
    verifyZooForward(backend, golden.name(), golden.folder(), golden.input(),
                     golden.json["tensors"].toArray(), golden.tensorsPath(), "");
}
} // namespace headlight::test
