// `headlight info --model DIR`: what Headlight recognised in a checkpoint folder, read from
// config.json and the tensor headers only (no weights are loaded): the family, its sizes, how
// positions enter, where the norms sit, the stored dtypes and the stored parameter count.
// Its options: infoCommand() at the end, which `headlight info --help` prints.
#include "cli.h"
#include "cli_args.h"
#include "io/checkpoint.h"
#include "io/hub_cache.h"
#include "model/model_family.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <algorithm>
#include <set>

namespace headlight::app {
namespace {

QString positionsText(const ModelSpec& s) {
    if (s.architecture == Architecture::Headlight)
        return QStringLiteral("the zoo's own (docs/zoo-format.md)");
    if (s.positions == PositionsKind::Rotary && s.localRopeTheta > 0)
        return QStringLiteral("rotary (theta %1, windowed layers %2)")
            .arg(QString::number(s.ropeTheta, 'g', 12), QString::number(s.localRopeTheta, 'g', 12));
    if (s.positions == PositionsKind::Rotary)
        return QStringLiteral("rotary (theta %1)").arg(QString::number(s.ropeTheta, 'g', 12));
    const QString table = QStringLiteral("learned, %1 rows").arg(s.maxPositions);
    return s.positionOffset > 0 ? table + QStringLiteral(", ids start at %1").arg(s.positionOffset)
                                : table;
}

QString normsText(const ModelSpec& s) {
    QString text =
        s.norm == NormKind::RmsNorm ? QStringLiteral("RMSNorm") : QStringLiteral("LayerNorm");
    text += s.sandwichNorms ? QStringLiteral(" before and after each sub-layer, scale 1 + w")
            : s.preNorm     ? QStringLiteral(" before each sub-layer")
                            : QStringLiteral(" after each sub-layer");
    if (s.qkNorm) text += QStringLiteral(", per-head RMSNorm of q and k");
    return text + QStringLiteral(", eps %1").arg(double(s.normEps));
}

// Which keys a query sees and how its scores are shaped, where a family departs from the plain
// scaled dot product over every key (Mistral's window; Gemma's windowed and global layers, scale
// and soft-capping).
QString attentionText(const ModelSpec& s) {
    QString text = s.slidingWindow ? QStringLiteral("window %1").arg(*s.slidingWindow)
                                   : QStringLiteral("every key");
    const auto global = std::count(s.globalLayers.begin(), s.globalLayers.end(), true);
    if (s.slidingWindow && global > 0)
        text += QStringLiteral(" on %1 of %2 layers").arg(s.layers - global).arg(s.layers);
    if (s.attentionScale > 0) text += QStringLiteral(", scale %1").arg(double(s.attentionScale));
    if (s.attentionSoftcap > 0)
        text += QStringLiteral(", scores soft-capped at %1").arg(double(s.attentionSoftcap));
    if (s.finalSoftcap > 0)
        text += QStringLiteral(", logits soft-capped at %1").arg(double(s.finalSoftcap));
    return text;
}

struct StoredTensors {
    QStringList dtypes;
    qint64 parameters = 0;
};

StoredTensors summariseStoredTensors(const io::Checkpoint& checkpoint) {
    std::set<std::string> dtypes;
    StoredTensors stored;
    for (const std::string& name : checkpoint.names()) {
        const io::TensorInfo& info = checkpoint.info(name);
        dtypes.insert(io::dtypeName(info.dtype));
        qint64 count = 1;
        for (int64_t dim : info.shape)
            count *= dim;
        stored.parameters += count;
    }
    for (const std::string& dtype : dtypes)
        stored.dtypes << QString::fromStdString(dtype);
    return stored;
}

int runInfo(const CliArgs& args) {
    const std::string folder = io::resolveModel(args.required("--model").toStdString()).folder;
    const ModelSpec s = loadModelConfig(folder);
    const io::Checkpoint checkpoint(folder);
    const StoredTensors stored = summariseStoredTensors(checkpoint);
    const QList<QPair<QString, QJsonValue>> rows{
        {"model_type", QString::fromStdString(s.modelType.empty() ? architectureName(s.architecture)
                                                                  : s.modelType)},
        {"family", QString::fromLatin1(familyOf(s.architecture).displayName)},
        {"layers", s.layers},
        {"heads", s.heads},
        {"kv_heads", s.kvHeads},
        {"head_dim", s.headDim},
        {"hidden", s.hidden},
        {"intermediate", s.intermediate},
        {"vocab", s.vocabSize},
        {"causal", s.causal},
        {"positions", positionsText(s)},
        {"norms", normsText(s)},
        {"attention", attentionText(s)},
        {"dtype", stored.dtypes.join(", ")},
        {"parameters", double(stored.parameters)},
    };
    QTextStream out(stdout);
    if (args.has("--json")) {
        QJsonObject root{{"model", QString::fromStdString(folder)}};
        for (const auto& [key, value] : rows)
            root.insert(key, value);
        out << QJsonDocument(root).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto& [key, value] : rows) {
        const QString text = value.isBool()     ? QString(value.toBool() ? "yes" : "no")
                             : value.isString() ? value.toString()
                                                : QString::number(qint64(value.toDouble()));
        out << (key + ":").leftJustified(14) << text << "\n";
    }
    return 0;
}
} // namespace

CliCommand infoCommand() {
    return {
        QStringLiteral("info"),
        QStringLiteral(
            "say what Headlight recognises in a checkpoint: family, sizes, positions, norms"),
        {QStringLiteral("--model DIR [--json]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, or a Hugging Face cache folder or cached ORG/NAME id, read "
          "offline; only config.json and the tensor headers are read"},
         {"--json", {}, "print the same fields as JSON"}},
        {QStringLiteral("headlight info --model tests/data/models/qwen3")},
        &runInfo,
    };
}
} // namespace headlight::app
