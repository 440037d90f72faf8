// `headlight tokenize --model DIR --text STR [--text-pair STR] [--no-special-tokens] [--json]`: the
// tokens Headlight's tokenizer gives for a text, as Hugging Face's would. Needs only the tokenizer
// files of DIR, not the weights.
#include "cli.h"
#include "cli_args.h"
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
} // namespace

int runTokenizeCommand(const QStringList& args) {
    const CliArgs parsed(args, {"--no-special-tokens", "--json"},
                         {"--model", "--text", "--text-pair"});
    const auto tokenizer = tokenize::Tokenizer::load(parsed.required("--model").toStdString());
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
} // namespace headlight::app
