// `headlight steer`: a steering vector from two files of texts (session/steering_recipe.h),
// written as a safetensors file that `headlight inspect --steering-vector` adds back. Its
// options: steerCommand() at the end.
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "corpus_analysis.h"
#include "steering_recipe.h"

#include <cmath>
#include <cstdio>

namespace headlight::app {
namespace {

// The texts of `path`, one per line; `flag` names it in refusals.
QStringList textsOfFile(const char* flag, const QString& path) {
    QStringList texts;
    try {
        texts = readCorpus(path);
    } catch (const std::exception& error) {
        throw CliError(std::string(flag) + " " + path.toStdString() + ": " + error.what());
    }
    if (texts.isEmpty())
        throw CliError(std::string(flag) + " " + path.toStdString() + " holds no text");
    return texts;
}

int runSteer(const CliArgs& args) {
    const QString out = args.required("--out");
    SteeringRecipe recipe;
    recipe.hook = args.required("--hook").toStdString();
    const std::unique_ptr<LoadedModel> loaded = loadChosenModel(args, "steer");
    if (args.has("--method")) recipe.method = args.value("--method").toStdString();
    Tensor vector;
    try {
        steeringHook(*loaded, recipe.hook); // refused before the files are read
        recipe.positive = textsOfFile("--positive", args.required("--positive"));
        recipe.negative = textsOfFile("--negative", args.required("--negative"));
        vector = makeSteeringVector(*loaded, recipe);
    } catch (const SteeringRecipeError& error) {
        throw CliError("--" + error.part() + ": " + error.what());
    }
    writeSteeringRecipe(out, vector, recipe, *loaded);
    double norm = 0.0;
    for (std::size_t i = 0; i < vector.size(); ++i)
        norm += double(vector.data()[i]) * vector.data()[i];
    std::printf("steering vector at %s from %lld positive and %lld negative texts: %lld values, "
                "norm %.6g -> %s\n",
                recipe.hook.c_str(), static_cast<long long>(recipe.positive.size()),
                static_cast<long long>(recipe.negative.size()),
                static_cast<long long>(vector.size()), std::sqrt(norm), qPrintable(out));
    return 0;
}
} // namespace

CliCommand steerCommand() {
    return {
        QStringLiteral("steer"),
        QStringLiteral("a steering vector: the difference of the residual stream's means at a "
                       "hook between two sets of texts, or their paired principal component"),
        {QStringLiteral("--model DIR --positive FILE --negative FILE --hook "
                        "blocks.L.hook_resid_pre|hook_resid_post --out FILE.safetensors "
                        "[--method mean|pca-diff|pca-center] [--backend cpu|vulkan] "
                        "[--vulkan-device SEL]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, a zoo model's name, or a Hugging Face cache folder or cached "
          "ORG/NAME id, read offline"},
         revisionOption(),
         {"--positive", "FILE",
          "the texts steered towards, one per line (token ids when the checkpoint has no "
          "tokenizer)"},
         {"--negative", "FILE", "the texts steered away from, one per line"},
         {"--hook", "blocks.L.hook_resid_post",
          "where the residual stream is read and the vector later added: the input "
          "(hook_resid_pre) or the output (hook_resid_post, the last block's before the final "
          "norm) of block L"},
         {"--out", "FILE.safetensors",
          "write the vector v of each text's last token as the f32 tensor steering_vector [d], "
          "with its hook and method in the metadata (atomically)"},
         {"--method", "mean|pca-diff|pca-center",
          "mean (default): v = mean(positive) - mean(negative); pca-diff: the first principal "
          "component of positive i - negative i, the texts paired line by line, unit length, "
          "signed towards the positives (repeng's pca_diff); pca-center: of each text minus its "
          "pair's midpoint (repeng's pca_center)"},
         backendOption(),
         vulkanDeviceOption()},
        {QStringLiteral("headlight steer --model ~/gpt2 --positive love.txt --negative hate.txt "
                        "--hook blocks.6.hook_resid_post --out love.safetensors"),
         QStringLiteral("headlight inspect --model ~/gpt2 --text 'I think that' "
                        "--steering-vector love.safetensors --strength 4")},
        &runSteer,
    };
}
} // namespace headlight::app
