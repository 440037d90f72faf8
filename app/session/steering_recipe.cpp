#include "steering_recipe.h"

#include "analysis/steering_vector.h"
#include "io/steering_vector_file.h"
#include "text_input.h"

namespace headlight::app {
namespace {

// The hook's activations [T, d] of every text of one set, one pass each.
std::vector<Tensor> activationsOfSet(const LoadedModel& model, const std::string& part,
                                     const QStringList& texts, const analysis::SaeHook& hook,
                                     int64_t& done, int64_t total,
                                     const SteeringProgress& progress) {
    if (texts.isEmpty()) throw SteeringRecipeError(part, "the " + part + " set holds no text");
    const int layers = model.model->spec().layers;
    std::vector<Tensor> activations;
    for (const QString& text : texts) {
        const PreparedText prepared = prepareText(model.tokenizer.get(), text);
        if (prepared.input.ids.empty())
            throw SteeringRecipeError(part, "'" + text.left(60).toStdString() + "' gave no tokens");
        const Trace trace =
            model.model->forward(prepared.input, analysis::captureForHook(hook, layers));
        activations.push_back(analysis::activationsAtHook(trace, hook, layers));
        if (progress && !progress(++done, total)) return {};
    }
    return activations;
}

Tensor vectorByMethod(const std::string& method, const std::vector<Tensor>& positive,
                      const std::vector<Tensor>& negative) {
    if (method == "mean") return analysis::differenceOfMeans(positive, negative);
    if (method == "pca-diff")
        return analysis::pairedPrincipalComponent(positive, negative,
                                                  analysis::PairedComponent::Diff);
    if (method == "pca-center")
        return analysis::pairedPrincipalComponent(positive, negative,
                                                  analysis::PairedComponent::Center);
    throw SteeringRecipeError("method",
                              "'" + method + "' is not one of mean, pca-diff, pca-center");
}
} // namespace

analysis::SaeHook steeringHook(const LoadedModel& model, const std::string& hook) {
    try {
        return analysis::parseSaeHook(hook, model.model->spec().layers);
    } catch (const std::invalid_argument& error) {
        throw SteeringRecipeError("hook", error.what());
    }
}

Tensor makeSteeringVector(const LoadedModel& model, const SteeringRecipe& recipe,
                          const SteeringProgress& progress) {
    const analysis::SaeHook hook = steeringHook(model, recipe.hook);
    const int64_t total = recipe.positive.size() + recipe.negative.size();
    int64_t done = 0;
    const std::vector<Tensor> positive =
        activationsOfSet(model, "positive", recipe.positive, hook, done, total, progress);
    if (positive.size() != std::size_t(recipe.positive.size())) return {};
    const std::vector<Tensor> negative =
        activationsOfSet(model, "negative", recipe.negative, hook, done, total, progress);
    if (negative.size() != std::size_t(recipe.negative.size())) return {};
    try {
        return vectorByMethod(recipe.method, positive, negative);
    } catch (const std::invalid_argument& error) {
        throw SteeringRecipeError("method", recipe.method + ": " + error.what());
    }
}

void writeSteeringRecipe(const QString& path, const Tensor& vector, const SteeringRecipe& recipe,
                         const LoadedModel& model) {
    io::writeSteeringVector(
        path.toStdString(), vector,
        {{"hook", recipe.hook},
         {"method", recipe.method == "mean" ? "difference-of-means" : recipe.method},
         {"positions", "last"},
         {"positive_texts", std::to_string(recipe.positive.size())},
         {"negative_texts", std::to_string(recipe.negative.size())},
         {"model", model.source.toStdString()}});
}
} // namespace headlight::app
