#include "cli_text_input.h"

#include "text_input.h"

#include <QRegularExpression>
#include <cstdint>

namespace headlight::app {
namespace {

std::vector<int32_t> idsOf(const QString& text) {
    std::vector<int32_t> ids;
    for (const QString& part :
         text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const long long value = part.toLongLong(&ok);
        if (!ok || value < 0 || value > INT32_MAX)
            throw CliError("--ids: '" + part.toStdString() + "' is not a token id");
        ids.push_back(int32_t(value));
    }
    if (ids.empty()) throw CliError("--ids is empty");
    return ids;
}
} // namespace

std::unique_ptr<tokenize::Tokenizer> optionalTokenizer(const std::string& folder) {
    try {
        return tokenize::Tokenizer::load(folder);
    } catch (const tokenize::TokenizerError&) {
        return nullptr; // Why: a checkpoint without tokenizer files runs on --ids
    }
}

CliTextInput cliTextInput(const CliArgs& args, const tokenize::Tokenizer* tokenizer) {
    if (args.has("--ids") == args.has("--text"))
        throw CliError("give exactly one of --text and --ids");
    CliTextInput input;
    if (args.has("--ids")) {
        input.model.ids = idsOf(args.value("--ids"));
        for (int32_t id : input.model.ids)
            input.labels.append(tokenizer ? QString::fromStdString(tokenizer->tokenString(id))
                                          : QString());
        return input;
    }
    if (args.value("--text").isEmpty()) throw CliError("--text is empty: give some text");
    if (!tokenizer)
        throw CliError("the checkpoint has no tokenizer files: give token ids with --ids");
    PreparedText prepared = prepareText(tokenizer, args.value("--text"));
    if (prepared.input.ids.empty()) throw CliError("the text produced no tokens");
    input.model = std::move(prepared.input);
    input.labels = prepared.labels;
    return input;
}
} // namespace headlight::app
