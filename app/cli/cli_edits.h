#pragma once
// The residual-stream edits `headlight inspect` applies inside the pass (variants::ResidualEdit):
// an SAE's features (--sae with --clamp F=V, --steer F=α, --splice with-error|no-error) and
// steering vectors (--steering-vector FILE, a Headlight .safetensors or a llama.cpp .gguf control
// vector, times --strength α). Each edit comes with a one-line description for the printed
// output and an object for the JSON summary.

#include "cli_args.h"
#include "model/model_spec.h"
#include "variants/intervention.h"

#include <QJsonArray>
#include <QStringList>
#include <vector>

namespace headlight::app {

struct CliResidualEdits {
    std::vector<variants::ResidualEdit> edits;
    QStringList descriptions; // one line each
    QJsonArray json;          // one object each
    bool empty() const { return edits.empty(); }
};

// Whether the arguments ask for any edit.
bool wantsResidualEdits(const CliArgs& args);
// Checks the options' syntax and combinations before any model is loaded; throws CliError.
void checkResidualEditArguments(const CliArgs& args);
// Reads the SAE folder or the vector files and builds the edits for a model of `spec`; throws
// CliError with a one-line reason (a feature out of range, a hook or width the model lacks).
CliResidualEdits residualEditsFor(const CliArgs& args, const ModelSpec& spec);
// The options, as inspect declares them.
std::vector<CliOption> residualEditOptions();
} // namespace headlight::app
