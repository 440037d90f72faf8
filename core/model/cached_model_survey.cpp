#include "model/cached_model_survey.h"

#include "io/checkpoint.h"
#include "model/model_spec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <set>

namespace headlight {
namespace {
constexpr qint64 kMaxConfigBytes = 10'000'000;

// model_type and architectures[0] as written, even for architectures Headlight does not run.
std::string describeArchitecture(const std::string& snapshot) {
    QFile file(QString::fromStdString(snapshot + "/config.json"));
    if (file.size() > kMaxConfigBytes || !file.open(QIODevice::ReadOnly)) return {};
    const QJsonObject config = QJsonDocument::fromJson(file.readAll()).object();
    const QString type = config["model_type"].toString();
    const QString classes = config["architectures"].toArray().first().toString();
    if (type.isEmpty()) return classes.toStdString();
    return (classes.isEmpty() ? type : type + " · " + classes).toStdString();
}

std::string storedDtypes(const io::Checkpoint& checkpoint) {
    std::set<std::string> dtypes;
    for (const std::string& name : checkpoint.names())
        dtypes.insert(io::dtypeName(checkpoint.info(name).dtype));
    std::string list;
    for (const std::string& dtype : dtypes)
        list += (list.empty() ? "" : ", ") + dtype;
    return list;
}
} // namespace

CachedModelSurvey surveyCachedModel(const io::CachedModel& model) {
    CachedModelSurvey survey{model, {}, {}, false, {}};
    if (model.snapshot.empty()) {
        survey.problem = "no snapshot: the model was never fully downloaded";
        return survey;
    }
    try {
        // Why first: nothing is read through a link that leaves the cache.
        io::checkSnapshotLinks(model.snapshot, model.repoFolder);
    } catch (const std::exception& error) {
        survey.problem = error.what();
        return survey;
    }
    survey.architecture = describeArchitecture(model.snapshot);
    std::string weightsProblem;
    try {
        io::checkSnapshotDownloaded(model.snapshot, model.repoFolder);
        const io::Checkpoint checkpoint(model.snapshot);
        survey.dtypes = storedDtypes(checkpoint);
    } catch (const std::exception& error) {
        weightsProblem = error.what();
    }
    try {
        // Why the config's problem wins: "unknown architecture t5" says more than the weights.
        loadModelConfig(model.snapshot);
    } catch (const std::exception& error) {
        survey.problem = error.what();
        return survey;
    }
    survey.problem = weightsProblem;
    survey.runnable = weightsProblem.empty();
    return survey;
}
} // namespace headlight
