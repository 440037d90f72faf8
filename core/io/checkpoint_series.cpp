#include "io/checkpoint_series.h"

#include "io/hub_cache.h"
#include "io/tensor_file.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace headlight::io {
namespace {
namespace fs = std::filesystem;

constexpr qint64 kMaxRunFileBytes = 10'000'000;

// Reads one run.json; every refusal names it.
class RunFile {
public:
    explicit RunFile(const fs::path& folder)
        : path_((folder / kRunFileName).string()) {}

    [[noreturn]] void fail(const std::string& why) const {
        throw CheckpointError(path_ + ": " + why);
    }

    QJsonObject read() const {
        QFile file(QString::fromStdString(path_));
        if (file.size() > kMaxRunFileBytes) fail("larger than 10 MB");
        if (!file.open(QIODevice::ReadOnly))
            fail("cannot be read (" + file.errorString().toStdString() + ")");
        QJsonParseError error{};
        const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
        if (error.error != QJsonParseError::NoError)
            fail("not JSON (" + error.errorString().toStdString() + " at byte " +
                 std::to_string(error.offset) + ")");
        if (!document.isObject()) fail("must be a JSON object");
        const QJsonObject run = document.object();
        if (run.value("format").toString() != QLatin1String(kRunFormat))
            fail(std::string("\"format\" must be \"") + kRunFormat + "\"");
        return run;
    }

    std::string text(const QJsonObject& object, const char* key, bool required) const {
        const QJsonValue value = object.value(key);
        if (value.isUndefined() && !required) return {};
        if (!value.isString() || (required && value.toString().isEmpty()))
            fail(std::string("\"") + key + "\" must be a non-empty string");
        return value.toString().toStdString();
    }

    SeriesCheckpoint checkpoint(const QJsonValue& value, std::size_t index,
                                const fs::path& folder) const {
        const std::string where = "checkpoints[" + std::to_string(index) + "]";
        const QJsonObject entry = value.toObject();
        const double step = entry.value("step").toDouble(-1.0);
        if (!value.isObject() || step < 0 || step != std::floor(step) || step > 9e15)
            fail(where + ".step must be a whole number of 0 or more");
        const QJsonValue name = entry.value("folder");
        const fs::path relative(name.toString().toStdString());
        if (!name.isString() || relative.empty() || relative.is_absolute() ||
            std::any_of(relative.begin(), relative.end(),
                        [](const fs::path& part) { return part == ".." || part == "."; }))
            fail(where + ".folder must be a folder name inside the run");
        std::error_code error;
        if (!fs::is_directory(folder / relative, error))
            fail(where + ".folder " + relative.string() + " does not exist in " + folder.string());
        const QJsonValue loss = entry.value("loss");
        if (!loss.isUndefined() && !loss.isDouble()) fail(where + ".loss must be a number");
        SeriesCheckpoint checkpoint{"step " + std::to_string(int64_t(step)),
                                    int64_t(step),
                                    (folder / relative).string(),
                                    {}};
        if (loss.isDouble()) checkpoint.heldOutLoss = loss.toDouble();
        return checkpoint;
    }

private:
    std::string path_;
};
} // namespace

bool isRunFolder(const std::string& folder) {
    std::error_code error;
    return fs::is_regular_file(fs::path(folder) / kRunFileName, error);
}

CheckpointSeries readRunFolder(const std::string& folder) {
    const fs::path run = fs::absolute(fs::path(folder)).lexically_normal();
    const RunFile file(run);
    const QJsonObject json = file.read();
    CheckpointSeries series{file.text(json, "name", true),
                            file.text(json, "description", false),
                            file.text(json, "text", false),
                            run.string(),
                            {}};
    const QJsonArray checkpoints = json.value("checkpoints").toArray();
    if (checkpoints.isEmpty()) file.fail("\"checkpoints\" must be a non-empty list");
    for (qsizetype i = 0; i < checkpoints.size(); ++i) {
        SeriesCheckpoint checkpoint = file.checkpoint(checkpoints[i], std::size_t(i), run);
        if (!series.checkpoints.empty() && *checkpoint.step <= *series.checkpoints.back().step)
            file.fail("checkpoints[" + std::to_string(i) + "].step " +
                      std::to_string(*checkpoint.step) + " does not come after step " +
                      std::to_string(*series.checkpoints.back().step) + ": steps must increase");
        series.checkpoints.push_back(std::move(checkpoint));
    }
    return series;
}

CheckpointSeries hubRevisionSeries(const std::string& pathOrId) {
    const std::string repo = cachedRepoFolder(pathOrId);
    const std::vector<CachedRevision> revisions = listRevisions(repo);
    const bool stepped = std::any_of(revisions.begin(), revisions.end(),
                                     [](const CachedRevision& r) { return r.step.has_value(); });
    CheckpointSeries series;
    series.source = repo;
    std::set<std::string> commits;
    for (const CachedRevision& revision : revisions) {
        // Why one per commit: Pythia's main is the same commit as its last step.
        if ((stepped && !revision.step) || !commits.insert(revision.commit).second) continue;
        checkSnapshot(revision.snapshot, repo);
        series.checkpoints.push_back({revision.name, revision.step, revision.snapshot, {}});
    }
    series.name = cachedRepoId(repo);
    if (series.checkpoints.size() < 2)
        throw CheckpointError(repo + " holds " + std::to_string(series.checkpoints.size()) +
                              " revision(s): a series needs two or more (fetch more with "
                              "`huggingface-cli download ID --revision NAME`)");
    return series;
}
} // namespace headlight::io
