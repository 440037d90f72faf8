// `headlight info --model DIR`: what Headlight recognised in a checkpoint folder, read from
// config.json and the tensor headers only (no weights are loaded): the family, its sizes, how
// positions enter, where the norms sit, the stored dtypes and the stored parameter count.
// Its options: infoCommand() at the end, which `headlight info --help` prints.
#include "cli.h"
#include "cli_args.h"
#include "io/checkpoint.h"
#include "io/hub_cache.h"
#include "model/memory_budget.h"
#include "model/model_family.h"
#include "model/weight_quantization.h"

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
    if (s.positions == PositionsKind::Rotary) {
        QString theta = QStringLiteral("theta %1").arg(QString::number(s.ropeTheta, 'g', 12));
        if (s.localRopeTheta > 0)
            theta += QStringLiteral(", windowed layers %1")
                         .arg(QString::number(s.localRopeTheta, 'g', 12));
        if (s.rotaryDim == 0 || (s.rotaryDim == s.headDim && !s.rotaryInterleaved))
            return QStringLiteral("rotary (%1)").arg(theta);
        return QStringLiteral("rotary on %1 of %2 features per head, %3 (%4)")
            .arg(s.rotaryDim)
            .arg(s.headDim)
            .arg(s.rotaryInterleaved ? QStringLiteral("interleaved pairs")
                                     : QStringLiteral("rotate-half"))
            .arg(theta);
    }
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
    if (s.parallelResidual) text += QStringLiteral(", attention and MLP in parallel");
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

// The sequence length the memory plan is made for unless --tokens says otherwise.
constexpr int kPlanTokens = 512;
constexpr int kMaxPlanTokens = 10'000'000; // as config_reader.h bounds max_position_embeddings

QString valueText(const QJsonValue& value) {
    return value.isBool()     ? QString(value.toBool() ? "yes" : "no")
           : value.isString() ? value.toString()
                              : QString::number(qint64(value.toDouble()));
}

// With --weights int8: the weights read and quantised, for each layer's error (the only step of
// info that reads tensor data).
std::optional<QuantizationReport> int8Report(const CliArgs& args, const io::Checkpoint& checkpoint,
                                             const ModelSpec& spec) {
    if (!args.has("--weights")) return std::nullopt;
    if (args.value("--weights") != "int8")
        throw CliError("--weights '" + args.value("--weights").toStdString() + "' is not int8");
    HostWeights weights = readWeights(checkpoint, spec);
    return quantizeInt8(weights);
}

int runInfo(const CliArgs& args) {
    const std::string folder = io::resolveModel(args.model().toStdString()).folder;
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
    const MemoryPlan plan =
        planMemory(checkpoint, s, args.integer("--tokens", kPlanTokens, 1, kMaxPlanTokens),
                   CaptureRequest{}, true);
    const QList<QPair<QString, QJsonValue>> planRows{
        {"tokens", double(plan.tokens)},
        {"mapped_bytes", plan.weights.mapped},
        {"widened_bytes", plan.load - plan.weights.mapped}, // held twice while loading
        {"pass_bytes", plan.forward.total()},
        {"peak_bytes", plan.peak()},
        {"available_bytes", plan.available ? QJsonValue(*plan.available) : QJsonValue()},
        {"fits", plan.fits()},
    };
    const std::optional<QuantizationReport> int8 = int8Report(args, checkpoint, s);
    QTextStream out(stdout);
    if (args.has("--json")) {
        QJsonObject root{{"model", QString::fromStdString(folder)}};
        for (const auto& [key, value] : rows + planRows)
            root.insert(key, value);
        if (int8) {
            QJsonArray errors;
            for (double error : int8->layerRelativeError)
                errors.append(error);
            root.insert("int8_bytes", int8->int8Bytes);
            root.insert("int8_layer_error", errors);
        }
        out << QJsonDocument(root).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto& [key, value] : rows)
        out << (key + ":").leftJustified(14) << valueText(value) << "\n";
    for (const auto& [key, value] : planRows) {
        const bool bytes = key.endsWith("_bytes");
        out << (QString(key).remove("_bytes") + ":").leftJustified(14)
            << (bytes && value.isDouble() ? QString::fromStdString(formatBytes(value.toDouble()))
                : value.isNull()          ? QStringLiteral("unknown")
                                          : valueText(value))
            << "\n";
    }
    if (!int8) return 0;
    out << QString("int8:").leftJustified(14)
        << QString::fromStdString(formatBytes(int8->int8Bytes))
        << " (every linear weight, one scale per output channel)\n";
    for (std::size_t l = 0; l < int8->layerRelativeError.size(); ++l)
        out << QString("layer %1:").arg(l).leftJustified(14)
            << QString::number(int8->layerRelativeError[l], 'e', 3)
            << " relative error against f32\n";
    return 0;
}
} // namespace

CliCommand infoCommand() {
    return {
        QStringLiteral("info"),
        QStringLiteral("say what Headlight recognises in a checkpoint: family, sizes, positions, "
                       "norms, and the memory a pass would need"),
        {QStringLiteral("--model DIR [--tokens T] [--weights int8] [--json]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, or a Hugging Face cache folder or cached ORG/NAME id, read "
          "offline; only config.json and the tensor headers are read (unless --weights int8)"},
         revisionOption(),
         {"--tokens", "T",
          "plan memory for a pass of T tokens on the CPU backend: the mapped weights, the "
          "widened ones (held twice while loading), the pass, their peak and whether it fits "
          "the memory available now (default 512)"},
         {"--weights", "int8",
          "also read the weights, quantise every linear layer's to int8 per output channel (as "
          "inspect --weights int8 runs them) and report each layer's relative error against f32"},
         {"--json", {}, "print the same fields as JSON"}},
        {QStringLiteral("headlight info --model tests/data/models/qwen3")},
        &runInfo,
    };
}
} // namespace headlight::app
