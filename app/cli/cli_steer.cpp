// `headlight steer`: a steering vector from two sets of texts, the difference of the means of
// the residual stream at a hook at each text's last token (analysis/steering_vector.h), written
// as a safetensors file (io/steering_vector_file.h) that `headlight inspect --steering-vector`
// adds back. Its options: steerCommand() at the end.
#include "analysis/sae_hook.h"
#include "analysis/steering_vector.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "corpus_analysis.h"
#include "io/steering_vector_file.h"
#include "model_session.h"
#include "text_input.h"

#include <cmath>
#include <cstdio>

namespace headlight::app {
namespace {

// The hook's activations [T, d] of every text of `path`, one pass each.
std::vector<Tensor> activationsOfTexts(const LoadedModel& loaded, const char* flag,
                                       const QString& path, const analysis::SaeHook& hook) {
    QStringList texts;
    try {
        texts = readCorpus(path);
    } catch (const std::exception& error) {
        throw CliError(std::string(flag) + " " + path.toStdString() + ": " + error.what());
    }
    if (texts.isEmpty())
        throw CliError(std::string(flag) + " " + path.toStdString() + " holds no text");
    const int layers = loaded.model->spec().layers;
    std::vector<Tensor> activations;
    for (const QString& text : texts) {
        const PreparedText prepared = prepareText(loaded.tokenizer.get(), text);
        if (prepared.input.ids.empty())
            throw CliError(std::string(flag) + ": '" + text.left(60).toStdString() +
                           "' gave no tokens");
        const Trace trace =
            loaded.model->forward(prepared.input, analysis::captureForHook(hook, layers));
        activations.push_back(analysis::activationsAtHook(trace, hook, layers));
    }
    return activations;
}

// --method: mean (difference of means), pca-diff or pca-center (analysis/steering_vector.h).
Tensor steeringVectorBy(const std::string& method, const std::vector<Tensor>& positive,
                        const std::vector<Tensor>& negative) {
    if (method == "mean") return analysis::differenceOfMeans(positive, negative);
    if (method == "pca-diff")
        return analysis::pairedPrincipalComponent(positive, negative,
                                                  analysis::PairedComponent::Diff);
    if (method == "pca-center")
        return analysis::pairedPrincipalComponent(positive, negative,
                                                  analysis::PairedComponent::Center);
    throw CliError("--method is '" + method + "'; known: mean, pca-diff, pca-center");
}

int runSteer(const CliArgs& args) {
    const QString out = args.required("--out");
    const std::string hookName = args.required("--hook").toStdString();
    const std::unique_ptr<LoadedModel> loaded = loadChosenModel(args, "steer");
    analysis::SaeHook hook;
    try {
        hook = analysis::parseSaeHook(hookName, loaded->model->spec().layers);
    } catch (const std::invalid_argument& error) {
        throw CliError(std::string("--hook: ") + error.what());
    }
    const std::vector<Tensor> positive =
        activationsOfTexts(*loaded, "--positive", args.required("--positive"), hook);
    const std::vector<Tensor> negative =
        activationsOfTexts(*loaded, "--negative", args.required("--negative"), hook);
    const std::string method = args.has("--method") ? args.value("--method").toStdString() : "mean";
    Tensor vector;
    try {
        vector = steeringVectorBy(method, positive, negative);
    } catch (const std::invalid_argument& error) {
        throw CliError("--method " + method + ": " + error.what());
    }
    io::writeSteeringVector(out.toStdString(), vector,
                            {{"hook", hookName},
                             {"method", method == "mean" ? "difference-of-means" : method},
                             {"positions", "last"},
                             {"positive_texts", std::to_string(positive.size())},
                             {"negative_texts", std::to_string(negative.size())},
                             {"model", loaded->source.toStdString()}});
    double norm = 0.0;
    for (std::size_t i = 0; i < vector.size(); ++i)
        norm += double(vector.data()[i]) * vector.data()[i];
    std::printf("steering vector at %s from %zu positive and %zu negative texts: %lld values, "
                "norm %.6g -> %s\n",
                hookName.c_str(), positive.size(), negative.size(),
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
