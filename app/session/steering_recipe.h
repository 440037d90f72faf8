#pragma once
// A steering vector from two sets of texts, as `headlight steer` and the window's "Make steering
// vector" dialog make it (docs/features.md "Steering vectors"): one pass per text, the hook's
// residual stream at each text's last token, then the difference of the two sets' means or
// repeng's paired principal component (analysis/steering_vector.h), written with its recipe as
// the file's metadata (io/steering_vector_file.h).

#include "analysis/sae_hook.h"
#include "model_session.h"

#include <QString>
#include <QStringList>
#include <functional>
#include <stdexcept>
#include <string>

namespace headlight::app {

struct SteeringRecipe {
    QStringList positive, negative; // one text each (token ids where there is no tokenizer)
    std::string hook;               // blocks.L.hook_resid_pre or blocks.L.hook_resid_post
    std::string method = "mean";    // mean, pca-diff or pca-center
};

inline const QStringList kSteeringMethods = {QStringLiteral("mean"), QStringLiteral("pca-diff"),
                                             QStringLiteral("pca-center")};

// A refusal in one line, with the part of the recipe it is about: "hook", "positive",
// "negative" or "method" (the CLI names its option, the window its field).
class SteeringRecipeError : public std::runtime_error {
public:
    SteeringRecipeError(std::string part, const std::string& reason)
        : std::runtime_error(reason)
        , part_(std::move(part)) {}
    const std::string& part() const { return part_; }

private:
    std::string part_;
};

// (done, total) passes; false stops the work, and then the result is empty.
using SteeringProgress = std::function<bool(int64_t done, int64_t total)>;

// The hook parsed for `model`; throws SteeringRecipeError (part "hook") for one it lacks.
analysis::SaeHook steeringHook(const LoadedModel& model, const std::string& hook);

// The vector [d]; empty when `progress` stopped it. Throws SteeringRecipeError for a hook the
// model lacks, a set without texts, a text that gives no tokens, or the method's refusal (an
// unknown method, sets of unequal size for a principal component).
Tensor makeSteeringVector(const LoadedModel& model, const SteeringRecipe& recipe,
                          const SteeringProgress& progress = {});

// Writes `vector` to `path` atomically with the recipe as metadata (hook, method, positions,
// the texts' counts, the model's source). Throws io::CheckpointError when it cannot be written.
void writeSteeringRecipe(const QString& path, const Tensor& vector, const SteeringRecipe& recipe,
                         const LoadedModel& model);
} // namespace headlight::app
