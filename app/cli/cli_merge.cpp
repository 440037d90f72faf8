// `headlight merge SHARDS... --out DIR`: the shard files `headlight figures realformer --shard
// i/n` wrote, all n of one run, combined into the figures, medians.csv and stdout lines one run
// over the whole corpus gives (docs/scale.md). Its options: mergeCommand() at the end.
#include "cli.h"
#include "cli_args.h"
#include "corpus_shard.h"
#include "figure_set_output.h"

#include <QTextStream>

namespace headlight::app {
namespace {

int runMerge(const CliArgs& args) {
    const QStringList paths = args.operands();
    if (paths.isEmpty())
        throw CliUsageError("give the shard files that `headlight figures --shard` wrote");
    args.required("--out");
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
    FigureSetOutput output =
        startFigureSet(command, args, merged.settings.value("corpus_name").toString());
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
                       "and medians.csv of one run"),
        {QStringLiteral("SHARD... --out DIR [--format pdf|svg|png]... [--dpi N]")},
        {{QStringLiteral("SHARD"),
          QStringLiteral("a shard file; give all n shards of one run, in any order"), true}},
        {{"--out", "DIR", "the folder to write into (made if missing)"},
         {"--format", "pdf|svg|png", "a format to write, repeatable (default: pdf and png)"},
         dpiOption()},
        {QStringLiteral("headlight merge shards/realformer-shard-*.safetensors --out figures/")},
        &runMerge,
    };
}
} // namespace headlight::app
