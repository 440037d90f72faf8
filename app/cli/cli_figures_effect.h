#pragma once
// `headlight figures variant-effect`: what each variant does to each model's output over a
// corpus (cli_figures_effect.cpp); `headlight figures` hands it the arguments.

#include "cli_args.h"
#include "cli_command.h"

#include <vector>

namespace headlight::app {

int runVariantEffectFigures(const CliArgs& args);
// The options it reads beyond those of `figures realformer`.
std::vector<CliOption> variantEffectOptions();
} // namespace headlight::app
