// `headlight tokenize`: the tokens Headlight's tokenizer gives for a text, as Hugging Face's
// would. Needs only the tokenizer files of the checkpoint, not the weights. Its options:
// tokenizeCommand() at the end, which `headlight tokenize --help` prints.
#include "cli.h"
#include "cli_args.h"
#include "io/hub_cache.h"
#include "tokenize/tokenizer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

namespace headlight::app {
namespace {

QJsonArray intArray(const std::vector<int>& values) {
    QJsonArray array;
    for (int value : values)
        array.append(value);
    return array;
}

QJsonObject toJson(const tokenize::Encoding& encoding, const std::string& kind) {
    QJsonArray tokens;
    for (const std::string& token : encoding.tokens)
        tokens.append(QString::fromStdString(token));
    QJsonArray offsets;
    for (const auto& [begin, end] : encoding.offsets)
        offsets.append(QJsonArray{begin, end});
    return QJsonObject{{"ids", intArray(encoding.ids)},
                       {"tokens", tokens},
                       {"type_ids", intArray(encoding.typeIds)},
                       {"offsets", offsets},
                       {"kind", QString::fromStdString(kind)}};
}

void printPlain(QTextStream& out, const tokenize::Encoding& encoding) {
    for (size_t i = 0; i < encoding.ids.size(); ++i)
        out << encoding.ids[i] << "\t" << QString::fromStdString(encoding.tokens[i]) << "\t"
            << encoding.offsets[i].first << "-" << encoding.offsets[i].second << "\n";
}

int runTokenize(const CliArgs& parsed) {
    const auto tokenizer = tokenize::Tokenizer::load(
        io::resolveModel(parsed.model().toStdString()).folder);
    std::optional<std::string> pair;
    if (parsed.has("--text-pair")) pair = parsed.value("--text-pair").toStdString();
    const tokenize::Encoding encoding = tokenizer->encode(parsed.required("--text").toStdString(),
                                                          pair, !parsed.has("--no-special-tokens"));
    QTextStream out(stdout);
    if (parsed.has("--json"))
        out << QJsonDocument(toJson(encoding, tokenizer->kind())).toJson(QJsonDocument::Compact)
            << "\n";
    else
        printPlain(out, encoding);
    return 0;
}
} // namespace

CliCommand tokenizeCommand() {
    return {
        QStringLiteral("tokenize"),
        QStringLiteral("show the token ids and offsets a checkpoint's tokenizer gives for a text"),
        {QStringLiteral("--model DIR --text STR [--text-pair STR] [--no-special-tokens] [--json]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, or a Hugging Face cache folder or cached ORG/NAME id; only its "
          "tokenizer files are read"},
         revisionOption(),
         {"--text", "STR", "the text to tokenize"},
         {"--text-pair", "STR", "a second segment, for tokenizers that take sentence pairs"},
         {"--no-special-tokens", {}, "leave out the tokenizer's special tokens ([CLS], <s>, ...)"},
         {"--json", {}, "print ids, tokens, type ids and offsets as one JSON object"}},
        {QStringLiteral("headlight tokenize --model resources/models/realformer --text \"It's "
                        "3.14\" --json")},
        &runTokenize,
    };
}
} // namespace headlight::app
