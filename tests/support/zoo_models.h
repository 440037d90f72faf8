#pragma once
// The trained zoo (resources/models, written by tools/train/train_zoo.py; docs/zoo.md):
// resources/models/goldens.json lists, for every shipped model, 2–3 inputs (text and ids) whose
// float64 PyTorch results (tools/zoo/model.py) are stored in <model>/golden.safetensors under
// "input{i}." + the names of tests/support/zoo_golden.h (attentions, last_hidden_state, logits
// through the tied head, internals).

#include "cli_runner.h"
#include "zoo_golden.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringList>

namespace headlight::test {

inline QString zooModelsRoot() {
    return QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models");
}

struct ZooModelCase {
    QJsonObject json;
    QString name() const { return json["name"].toString(); }
    QString model() const { return json["folder"].toString(); }
    QString folder() const { return zooModelsRoot() + "/" + model(); }
    QString text() const { return json["text"].toString(); }
    std::string prefix() const { return json["prefix"].toString().toStdString(); }
    ModelInput input() const {
        ModelInput input;
        for (const QJsonValue& v : json["ids"].toArray())
            input.ids.push_back(v.toInt());
        return input;
    }
};

inline std::vector<ZooModelCase> zooModelCases() {
    QFile file(zooModelsRoot() + "/goldens.json");
    if (!file.open(QIODevice::ReadOnly)) return {};
    std::vector<ZooModelCase> cases;
    for (const QJsonValue& c : QJsonDocument::fromJson(file.readAll()).object()["cases"].toArray())
        cases.push_back({c.toObject()});
    return cases;
}

// Every folder of resources/models that holds a zoo.json (a shipped model).
inline QStringList zooModelNames() {
    return QDir(zooModelsRoot())
        .entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)
        .filter(QRegularExpression(QStringLiteral("^[a-z0-9_]+$")));
}

// Loads the model on `backend`, runs the case's ids with every map and internal captured, and
// checks each stored tensor within kGoldenTolerance.
inline void verifyZooModelCase(Backend& backend, const ZooModelCase& golden) {
    std::unique_ptr<TransformerModel> model;
    try {
        model = loadModel(golden.folder().toStdString(), backend);
    } catch (const std::exception& error) {
        QFAIL(qPrintable(QString("loadModel threw: ") + error.what()));
    }
    CaptureRequest capture;
    capture.probabilities = true;
    capture.internals = true;
    Trace trace;
    try {
        trace = model->forward(golden.input(), capture);
    } catch (const std::exception& error) {
        QFAIL(qPrintable(QString("forward threw: ") + error.what()));
    }
    const io::SafetensorsFile expected((golden.folder() + "/golden.safetensors").toStdString());
    const io::SafetensorsFile weights((golden.folder() + "/model.safetensors").toStdString());
    std::vector<TensorDiff> diffs;
    QStringList missing;
    for (const QJsonValue& v : golden.json["tensors"].toArray()) {
        const std::string name = v.toString().toStdString();
        Tensor scratch;
        const Tensor* ours = nullptr;
        try {
            if (name == "logits") {
                scratch =
                    tiedLogits(trace.lastHiddenState, weights.loadF32("embeddings.token.weight"));
                ours = &scratch;
            } else {
                ours = tracedTensor(trace, name, scratch);
            }
        } catch (const std::exception& error) {
            missing << QString::fromStdString(name) + " (" + error.what() + ")";
            continue;
        }
        if (!ours) {
            missing << QString::fromStdString(name);
            continue;
        }
        TensorDiff diff{name, 0.0, {}};
        diff.maxAbs = maxAbsDiff(*ours, expected.loadF32(golden.prefix() + name), &diff.where);
        diffs.push_back(diff);
    }
    qInfo("%s: %s", qPrintable(golden.name()), qPrintable(describeDiffs(diffs)));
    QVERIFY2(missing.isEmpty(), qPrintable("not in the trace: " + missing.join(", ")));
    for (const TensorDiff& d : diffs)
        QVERIFY2(d.maxAbs <= kGoldenTolerance,
                 qPrintable(QString::fromStdString(d.name) + " max |diff| " +
                            QString::number(d.maxAbs) + " at " + d.where));
}

// `headlight inspect --model <zoo model> --text <its golden text> --json` on `backend`: exits 0,
// reports that backend and tokenizes the text to the golden ids (one byte a token).
inline void verifyZooModelInspect(const ZooModelCase& golden, const QString& backend) {
    const auto run = runHeadlight({"inspect", "--model", golden.folder(), "--text", golden.text(),
                                   "--json", "--backend", backend});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(summary["backend"].toString(), backend);
    QCOMPARE(summary["ids"].toArray(), golden.json["ids"].toArray());
}
} // namespace headlight::test
