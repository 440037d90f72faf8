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
#include <QTemporaryDir>

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

// One shipped model's golden input: its stored tensors sit under "input{i}." in golden.safetensors.
inline void verifyZooModelCase(Backend& backend, const ZooModelCase& golden) {
    verifyZooForward(backend, golden.name(), golden.folder(), golden.input(),
                     golden.json["tensors"].toArray(), golden.folder() + "/golden.safetensors",
                     golden.prefix());
}

// `headlight inspect --model <zoo model> --text <its golden text> --json --dump` on `backend`:
// exits 0, reports that backend, tokenizes the text to the golden ids (one byte a token) and
// dumps attentions and the last hidden state that match the goldens within kGoldenTolerance.
inline void verifyZooModelInspect(const ZooModelCase& golden, const QString& backend) {
    QTemporaryDir dir;
    const QString dump = dir.filePath("dump.safetensors");
    const auto run = runHeadlight({"inspect", "--model", golden.folder(), "--text", golden.text(),
                                   "--json", "--dump", dump, "--backend", backend});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8()).object();
    QCOMPARE(summary["backend"].toString(), backend);
    QCOMPARE(summary["ids"].toArray(), golden.json["ids"].toArray());
    const io::SafetensorsFile dumped(dump.toStdString());
    const io::SafetensorsFile expected((golden.folder() + "/golden.safetensors").toStdString());
    for (const std::string name : {"attentions", "last_hidden_state"}) {
        const double diff =
            maxAbsDiff(dumped.loadF32(name), expected.loadF32(golden.prefix() + name));
        QVERIFY2(diff <= goldenTolerance(golden.model()),
                 qPrintable(golden.name() + ": inspect's " + QString::fromStdString(name) +
                            " max |diff| " + QString::number(diff)));
    }
}
} // namespace headlight::test
