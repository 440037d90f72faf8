// `headlight merge SHARDS... --out DIR`: the shard files `headlight figures realformer --shard
// i/n` wrote, all n of one run, combined into the figures, medians.csv and stdout lines one run
// over the whole corpus gives (docs/scale.md). Its options: mergeCommand() at the end.
#include "build_info.h"
#include "cli.h"
#include "cli_args.h"
#include "corpus_shard.h"
#include "feature_scan.h"
#include "figure_set_output.h"

#include <QFileInfo>
#include <QTextStream>
#include <algorithm>

namespace headlight::app {
namespace {

FileHashes hashesOf(const QString& model, const QJsonObject& json) {
    FileHashes hashes;
    for (auto it = json.begin(); it != json.end(); ++it)
        hashes.emplace(model + QLatin1Char('/') + it.key(), it.value().toString());
    return hashes;
}

// What the merged files carry: the run the shards came from, as the first shard recorded it.
// `headlight reproduce` refuses these files (the shards would have to run again), but they say
// what they were made from like any other export.
Provenance mergeProvenance(const CorpusShard& merged) {
    Provenance provenance;
    QStringList names;
    for (const ShardModel& model : merged.models) {
        names << model.name;
        for (auto [into, role] : {std::pair{&provenance.files.weights, "weights"},
                                  std::pair{&provenance.files.tokenizer, "tokenizer"},
                                  std::pair{&provenance.files.config, "config"}})
            into->merge(hashesOf(model.name, model.files.value(QLatin1String(role)).toObject()));
    }
    provenance.modelName = names.join(QStringLiteral(", "));
    provenance.modelFolder = merged.made.value("models").toString();
    provenance.scenario.model = provenance.modelFolder.toStdString();
    provenance.scenario.view = "entropy-violins";
    provenance.corpus = CorpusFile{merged.made.value("corpus").toString(),
                                   merged.settings.value("corpus_sha256").toString()};
    provenance.backend = merged.settings.value("backend").toString();
    provenance.device = merged.made.value("device").toString();
    provenance.version = headlightVersion();
    provenance.revision = buildRevision();
    return provenance;
}

QStringList mergeCommandLine(const QStringList& paths, const FigureSetOutput& output) {
    QStringList command = {QStringLiteral("merge")};
    for (const QString& path : paths)
        command << QFileInfo(path).absoluteFilePath();
    command << QStringLiteral("--out") << output.out.absolutePath();
    for (const QString& format : output.formats)
        command << QStringLiteral("--format") << format;
    return command << QStringLiteral("--dpi") << QString::number(output.options.dpi);
}

// The shards of `features --scan --shard i/n` (JSON) -> one scan file at --out.
int mergeFeatureScanFiles(const QStringList& paths, const QString& out) {
    try {
        std::vector<FeatureScan> shards;
        for (const QString& path : paths)
            shards.push_back(readFeatureScan(path));
        const FeatureScan merged = mergeFeatureScans(shards, paths);
        writeFeatureScan(out, merged);
        QTextStream(stdout) << "merged " << paths.size() << " feature scan shards: " << merged.texts
                            << " texts, " << merged.tokens << " tokens -> " << out << "\n";
    } catch (const FeatureScanError& error) {
        throw CliError(error.what());
    }
    return 0;
}

int runMerge(const CliArgs& args) {
    const QStringList paths = args.operands();
    if (paths.isEmpty())
        throw CliUsageError("give the shard files that `headlight figures --shard` or "
                            "`headlight features --scan --shard` wrote");
    args.required("--out");
    if (std::all_of(paths.begin(), paths.end(),
                    [](const QString& path) { return path.endsWith(QLatin1String(".json")); }))
        return mergeFeatureScanFiles(paths, args.value("--out"));
    figureFormats(args);
    std::vector<CorpusShard> shards;
    CorpusShard merged;
    try {
        for (const QString& path : paths)
            shards.push_back(readCorpusShard(path));
        merged = mergeCorpusShards(shards, paths);
    } catch (const CorpusShardError& error) {
        throw CliError(error.what());
    }
    const QString command = QStringLiteral("merge");
    for (const ShardModel& model : merged.models)
        reportLeftOut(command, model.name, model.corpus);
    FigureSetOutput output = startFigureSet(
        command, args, merged.settings.value("corpus_name").toString(), mergeProvenance(merged));
    output.provenance.command = mergeCommandLine(paths, output);
    for (const ShardModel& model : merged.models) {
        writeModelFigures(output, model.name, model.corpus);
        QTextStream(stdout).flush();
    }
    finishFigureSet(output, merged.models.size());
    return 0;
}
} // namespace

CliCommand mergeCommand() {
    return {
        QStringLiteral("merge"),
        QStringLiteral("combine the shard files of `headlight figures --shard` into the figures "
                       "and medians.csv of one run, or those of `headlight features --scan "
                       "--shard` (.json) into one scan"),
        {QStringLiteral("SHARD... --out DIR [--format pdf|svg|png]... [--dpi N]"),
         QStringLiteral("SCAN.json... --out FILE.json")},
        {{QStringLiteral("SHARD"),
          QStringLiteral("a shard file; give all n shards of one run, in any order"), true}},
        {{"--out", "DIR|FILE",
          "the folder to write the figures into (made if missing), or the merged scan's file"},
         {"--format", "pdf|svg|png", "a format to write, repeatable (default: pdf and png)"},
         dpiOption()},
        {QStringLiteral("headlight merge shards/realformer-shard-*.safetensors --out figures/"),
         QStringLiteral("headlight merge scan-0.json scan-1.json --out scan.json")},
        &runMerge,
    };
}
} // namespace headlight::app
