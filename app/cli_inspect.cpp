// `headlight inspect`: one forward pass of a checkpoint on text or ids, with the attention of every
// layer and its analysis written to a safetensors dump and/or summarised as JSON.
//
//   headlight inspect --model DIR (--text STR [--text-pair STR] [--no-special-tokens]
//                     | --ids 1,2,3 [--token-type-ids 0,0,1] [--attention-mask 1,1,0])
//                     [--backend cpu|vulkan] [--vulkan-device SEL] [--repeat N]
//                     [--dump OUT.safetensors] [--json]
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <cstdio>

#include "analysis/divergence.h"
#include "backend/backend_factory.h"
#include "backend/vulkan/vk_error.h"
#include "cli.h"
#include "cli_args.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "tokenize/tokenizer.h"

namespace headlight::app {
namespace {

struct PreparedInput {
    ModelInput model;
    std::vector<std::string> tokens; // empty for --ids input
};

std::vector<int32_t> parseIntList(const QString& flag, const QString& text) {
    std::vector<int32_t> values;
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const long long value = part.trimmed().toLongLong(&ok);
        if (!ok || value < INT32_MIN || value > INT32_MAX)
            throw CliError(flag.toStdString() + ": '" + part.toStdString() + "' is not an integer");
        values.push_back(int32_t(value));
    }
    if (values.empty()) throw CliError(flag.toStdString() + " is empty");
    return values;
}

PreparedInput prepareInput(const CliArgs& args, const std::string& folder) {
    PreparedInput prepared;
    if (args.has("--ids") == args.has("--text")) throw CliError("give exactly one of --text and --ids");
    if (args.has("--ids")) {
        prepared.model.ids = parseIntList("--ids", args.value("--ids"));
        if (args.has("--token-type-ids"))
            prepared.model.tokenTypes = parseIntList("--token-type-ids", args.value("--token-type-ids"));
        if (args.has("--attention-mask"))
            for (int32_t m : parseIntList("--attention-mask", args.value("--attention-mask")))
                prepared.model.attentionMask.push_back(m != 0);
        return prepared;
    }
    const std::string text = args.value("--text").toStdString();
    if (text.empty() && !args.has("--text-pair")) throw CliError("--text is empty: give some text to inspect");
    std::optional<std::string> pair;
    if (args.has("--text-pair")) pair = args.value("--text-pair").toStdString();
    const auto tokenizer = tokenize::Tokenizer::load(folder);
    const tokenize::Encoding encoding = tokenizer->encode(text, pair, !args.has("--no-special-tokens"));
    if (encoding.ids.empty()) throw CliError("the text produced no tokens");
    prepared.model.ids.assign(encoding.ids.begin(), encoding.ids.end());
    prepared.model.tokenTypes.assign(encoding.typeIds.begin(), encoding.typeIds.end());
    prepared.tokens = encoding.tokens;
    return prepared;
}

std::vector<float> valuesOf(const Tensor& t) { return {t.values().begin(), t.values().end()}; }

void writeDump(const std::string& path, const Trace& trace) {
    const Tensor attentions = trace.stackedProbabilities();
    const Tensor entropy = analysis::attentionEntropy(attentions, trace.valid);
    const Tensor jsd = analysis::adjacentLayerJsd(attentions, trace.valid);
    std::vector<int64_t> ids(trace.ids.begin(), trace.ids.end());
    const int64_t tokens = int64_t(ids.size());
    io::writeSafetensors(path, {
                                   {"input_ids", {tokens}, {}, ids},
                                   {"attentions", attentions.shape(), valuesOf(attentions), {}},
                                   {"last_hidden_state", trace.lastHiddenState.shape(),
                                    valuesOf(trace.lastHiddenState), {}},
                                   {"entropy", entropy.shape(), valuesOf(entropy), {}},
                                   {"jsd_adjacent", jsd.shape(), valuesOf(jsd), {}},
                               });
}

QJsonArray shapeJson(const std::vector<int64_t>& shape) {
    QJsonArray array;
    for (int64_t d : shape) array.append(double(d));
    return array;
}

QJsonObject summaryJson(const std::string& folder, const TransformerModel& model, const PreparedInput& input,
                        const Trace& trace, const std::vector<double>& times, const std::string& note) {
    const ModelSpec& s = model.spec();
    QJsonArray ids, tokens, forwardMs;
    for (int32_t id : input.model.ids) ids.append(id);
    for (const std::string& t : input.tokens) tokens.append(QString::fromStdString(t));
    for (double ms : times) forwardMs.append(ms);
    const int64_t t = int64_t(trace.ids.size());
    QJsonObject shapes{{"input_ids", shapeJson({t})},
                       {"attentions", shapeJson({s.layers, s.heads, t, t})},
                       {"last_hidden_state", shapeJson(trace.lastHiddenState.shape())},
                       {"entropy", shapeJson({s.layers, s.heads, t})},
                       {"jsd_adjacent", shapeJson({std::max(s.layers - 1, 0), s.heads, t})}};
    QJsonObject root{{"model", QString::fromStdString(folder)},
                     {"architecture", architectureName(s.architecture)},
                     {"layers", s.layers},
                     {"heads", s.heads},
                     {"hidden", s.hidden},
                     {"ids", ids},
                     {"shapes", shapes},
                     {"backend", backendName(model.backend().kind())},
                     {"device", QString::fromStdString(model.backend().deviceName())},
                     {"forward_ms", forwardMs}};
    if (!input.tokens.empty()) root["tokens"] = tokens;
    if (!note.empty()) root["backend_note"] = QString::fromStdString(note);
    return root;
}

struct Run {
    Trace trace;
    std::vector<double> times;
};

Run runRepeated(const TransformerModel& model, const ModelInput& input, int repeat) {
    Run run;
    for (int i = 0; i < repeat; ++i) {
        run.trace = model.forward(input);
        run.times.push_back(run.trace.forwardMs);
    }
    return run;
}
} // namespace

int runInspectCommand(const QStringList& rawArgs) {
    const CliArgs args(rawArgs, {"--no-special-tokens", "--json"},
                       {"--model", "--text", "--text-pair", "--ids", "--token-type-ids", "--attention-mask",
                        "--backend", "--vulkan-device", "--repeat", "--dump"});
    const std::string folder = args.required("--model").toStdString();
    if (!args.has("--dump") && !args.has("--json")) throw CliError("nothing to do: give --dump FILE and/or --json");
    const int repeat = args.integer("--repeat", 1, 1, 100000);
    const PreparedInput input = prepareInput(args, folder);

    std::optional<BackendKind> forced;
    if (args.has("--backend")) forced = args.backend();
    const std::string selector = args.value("--vulkan-device").toStdString();
    const BackendChoice choice = chooseBackend(forced, selector);
    OpenedBackend opened = openBackend(choice, selector);
    if (forced == BackendKind::Vulkan && choice.kind != BackendKind::Vulkan) opened.note = choice.reason;
    std::unique_ptr<TransformerModel> model;
    Run run;
    try {
        model = loadModel(folder, *opened.backend);
        run = runRepeated(*model, input.model, repeat);
    } catch (const vk::VulkanError& error) {
        // Pipeline creation failed, the device was lost or ran out of memory: the same pass on the CPU.
        model.reset(); // its device tensors go before the Vulkan backend that owns their memory
        opened = {makeCpuBackend(), std::string("Vulkan failed (") + error.what() + "); ran on the CPU backend"};
        model = loadModel(folder, *opened.backend);
        run = runRepeated(*model, input.model, repeat);
    }
    if (!opened.note.empty()) std::fprintf(stderr, "headlight inspect: %s\n", opened.note.c_str());
    if (args.has("--dump")) writeDump(args.value("--dump").toStdString(), run.trace);
    if (args.has("--json"))
        QTextStream(stdout) << QJsonDocument(summaryJson(folder, *model, input, run.trace, run.times, opened.note))
                                   .toJson(QJsonDocument::Indented);
    return 0;
}
} // namespace headlight::app
