#pragma once
// The text a command runs, from --text (tokenized with the checkpoint's special tokens) or --ids
// (taken as they are), for the commands that take either (features, sinks).

#include "cli_args.h"
#include "model/transformer.h"
#include "tokenize/tokenizer.h"

#include <QStringList>
#include <memory>
#include <string>

namespace headlight::app {

struct CliTextInput {
    ModelInput model;
    QStringList labels; // [T]; empty labels for --ids without a tokenizer
};

// The folder's tokenizer, or null when it has none (such a checkpoint runs on --ids).
std::unique_ptr<tokenize::Tokenizer> optionalTokenizer(const std::string& folder);

// Exactly one of --text and --ids; throws CliError with a one-line reason (both or neither,
// an empty text, an id that is not one, a text without a tokenizer, a text of no tokens).
CliTextInput cliTextInput(const CliArgs& args, const tokenize::Tokenizer* tokenizer);
} // namespace headlight::app
