#include "series_source.h"

#include "default_model.h"
#include "io/hub_cache.h"
#include "io/tensor_file.h"

#include <QDir>
#include <QFileInfo>

namespace headlight::app {

io::CheckpointSeries openCheckpointSeries(const QString& source) {
    if (QFileInfo(source).isDir() && io::isRunFolder(source.toStdString()))
        return io::readRunFolder(source.toStdString());
    const std::optional<QString> resources = resourcesFolder();
    const QString shipped = resources ? *resources + "/runs/" + source : QString();
    if (!source.contains(QLatin1Char('/')) && resources && QFileInfo(shipped).isDir())
        return io::readRunFolder(shipped.toStdString());
    try {
        return io::hubRevisionSeries(source.toStdString());
    } catch (const io::CheckpointError& error) {
        // Why reworded: a folder or name that is no run is more likely a mistyped run than a
        // cache entry.
        if (!QFileInfo(source).isDir() && source.contains(QLatin1Char('/'))) throw;
        throw io::CheckpointError(
            source.toStdString() + " is neither a training run (a folder with " + io::kRunFileName +
            ", or a run's name in " +
            (resources ? QDir::toNativeSeparators(*resources + "/runs").toStdString()
                       : std::string("resources/runs, not found")) +
            ") nor a Hugging Face cache repository with revisions (" + error.what() + ")");
    }
}

int checkpointIndex(const io::CheckpointSeries& series, const QString& folder) {
    const QString wanted = QFileInfo(folder).canonicalFilePath();
    for (std::size_t i = 0; i < series.checkpoints.size(); ++i)
        if (QFileInfo(QString::fromStdString(series.checkpoints[i].folder)).canonicalFilePath() ==
            wanted)
            return int(i);
    return -1;
}

std::optional<SeriesPosition> seriesOfFolder(const QString& folder) {
    const QDir parent = QFileInfo(QDir::cleanPath(QFileInfo(folder).absoluteFilePath())).dir();
    const bool snapshot = parent.dirName() == QLatin1String("snapshots");
    if (!snapshot && !io::isRunFolder(parent.path().toStdString())) return std::nullopt;
    try {
        QDir repo = parent;
        repo.cdUp();
        SeriesPosition position{snapshot ? io::hubRevisionSeries(repo.path().toStdString())
                                         : io::readRunFolder(parent.path().toStdString()),
                                0};
        position.index = checkpointIndex(position.series, folder);
        if (position.index < 0) return std::nullopt;
        return position;
    } catch (const io::CheckpointError&) {
        // Why nothing: the model itself opened; a run.json or cache it cannot list is no series.
        return std::nullopt;
    }
}
} // namespace headlight::app
