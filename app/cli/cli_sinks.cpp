// `headlight sinks`: attention sinks and massive activations on one text (docs/sinks.md): per
// layer the largest residual-stream activations against the median, each head's share of
// attention on the first token, and what zeroing the massive activations, dropping the first
// token or switching the attention rule does to the output and to those shares
// (analysis/attention_sinks.h). Its options: sinksCommand() at the end.
#include "analysis/attention_sinks.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "cli_text_input.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

namespace headlight::app {
namespace {

// [L][H] from layer-major shares.
QJsonArray layerRows(const std::vector<double>& shares, int heads) {
    QJsonArray rows;
    for (std::size_t l = 0; l * std::size_t(heads) < shares.size(); ++l) {
        QJsonArray row;
        for (int h = 0; h < heads; ++h)
            row.append(shares[l * std::size_t(heads) + std::size_t(h)]);
        rows.append(row);
    }
    return rows;
}

QJsonObject layerJson(const analysis::LargestActivations& layer, int index) {
    QJsonArray top;
    for (const analysis::Activation& a : layer.top)
        top.append(QJsonObject{{"token", a.token},
                               {"dim", a.dim},
                               {"value", double(a.value)},
                               {"massive", layer.isMassive(a)}});
    return {{"layer", index}, {"median", layer.median}, {"ratio", layer.ratio()}, {"top", top}};
}

QJsonObject sinkAblationJson(const analysis::SinkAblation& a, bool output, int heads) {
    QJsonObject json{{"id", QString::fromStdString(a.id)},
                     {"label", QString::fromStdString(a.label)}};
    if (!a.refusal.empty()) {
        json["refusal"] = QString::fromStdString(a.refusal);
        return json;
    }
    json["positions"] = a.positions;
    if (output) {
        json["mean_kl"] = a.meanKl;
        json["top1_changes"] = a.top1Changes;
    }
    json["sink_share"] = layerRows(a.sinkShare, heads);
    return json;
}

QJsonObject reportJson(const analysis::SinkReport& r, const LoadedModel& loaded,
                       const CliTextInput& input) {
    QJsonArray layers, ids, ablations;
    for (int l = 0; l < r.layers; ++l)
        layers.append(layerJson(r.activations[std::size_t(l)], l));
    for (int32_t id : input.model.ids)
        ids.append(id);
    for (const analysis::SinkAblation& a : r.ablations)
        ablations.append(sinkAblationJson(a, r.hasOutput, r.heads));
    QJsonObject json{{"model", loaded.source},
                     {"backend", backendName(loaded.model->backend().kind())},
                     {"ids", ids},
                     {"tokens", QJsonArray::fromStringList(input.labels)},
                     {"layers", layers},
                     {"arise_layer", r.ariseLayer},
                     {"sink_share", layerRows(r.sinkShare, r.heads)},
                     {"ablations", ablations}};
    if (!r.hasOutput) json["output_absence"] = QString::fromStdString(r.outputAbsence);
    return json;
}

QString tokenName(const CliTextInput& input, int token) {
    const QString label = input.labels.value(token);
    return label.isEmpty() ? QStringLiteral("#%1").arg(input.model.ids[std::size_t(token)])
                           : QStringLiteral("'%1'").arg(label);
}

void printActivations(QTextStream& out, const analysis::SinkReport& r, const CliTextInput& in) {
    out << "largest residual-stream activations, leaving each layer (before any final norm):\n"
        << "layer  median |x|  largest / median  largest (token dim: value; * massive)\n";
    for (int l = 0; l < r.layers; ++l) {
        const analysis::LargestActivations& a = r.activations[std::size_t(l)];
        out << QString::number(l).rightJustified(5) << "  "
            << QString::number(a.median, 'g', 4).rightJustified(10) << "  "
            << QString::number(a.ratio(), 'f', 1).rightJustified(16) << " ";
        for (const analysis::Activation& x : a.top)
            out << "  " << tokenName(in, x.token) << " " << x.dim << ": "
                << QString::number(double(x.value), 'g', 4) << (a.isMassive(x) ? "*" : "");
        out << "\n";
    }
    out << "they arise at layer " << r.ariseLayer
        << " (the first whose largest |x| is at least half the largest of any layer); * marks "
           "Sun et al.'s massive: |x| > 100 and ≥ 1000 × the median\n";
}

void printShares(QTextStream& out, const std::vector<double>& shares, int heads) {
    out << "layer" << QString(2, ' ');
    for (int h = 0; h < heads; ++h)
        out << QStringLiteral("h%1").arg(h).rightJustified(6);
    out << "\n";
    for (std::size_t i = 0; i < shares.size(); ++i) {
        if (i % std::size_t(heads) == 0)
            out << QString::number(int(i) / heads).rightJustified(5) << "  ";
        out << QString::number(shares[i], 'f', 3).rightJustified(6);
        if ((i + 1) % std::size_t(heads) == 0) out << "\n";
    }
}

void printAblations(QTextStream& out, const analysis::SinkReport& r) {
    out << "the sink taken away, against the clean pass (mean sink share "
        << QString::number(analysis::meanShare(r.sinkShare), 'f', 3) << "):\n"
        << "ablation      mean KL (nats)  top-1 changed  mean sink share  what\n";
    for (const analysis::SinkAblation& a : r.ablations) {
        out << QString::fromStdString(a.id).leftJustified(12) << "  ";
        if (!a.refusal.empty()) {
            out << "refused: " << QString::fromStdString(a.refusal) << "\n";
            continue;
        }
        if (r.hasOutput)
            out << QString::number(a.meanKl, 'f', 4).rightJustified(14) << "  "
                << QStringLiteral("%1 of %2")
                       .arg(a.top1Changes)
                       .arg(a.positions)
                       .rightJustified(13);
        else
            out << QString("—").rightJustified(14) << "  " << QString("—").rightJustified(13);
        out << "  " << QString::number(analysis::meanShare(a.sinkShare), 'f', 3).rightJustified(15)
            << "  " << QString::fromStdString(a.label) << "\n";
    }
    if (!r.hasOutput)
        out << "no output change: " << QString::fromStdString(r.outputAbsence) << "\n";
}

int runSinks(const CliArgs& args) {
    const int top = args.integer("--top", 4, 1, 1000);
    const variants::VariantSpec variant =
        args.has("--variant") ? variants::loadVariantSpec(args.value("--variant").toStdString())
                              : variants::VariantSpec{};
    const std::unique_ptr<LoadedModel> loaded = loadChosenModel(args, "sinks");
    const CliTextInput input = cliTextInput(args, loaded->tokenizer.get());
    if (input.model.ids.size() < 2)
        throw CliError("the text has 1 token: sinks need at least 2 (with one, the first token "
                       "is every token)");
    const analysis::SinkReport report =
        analysis::sinkReport(*loaded->model, input.model, variant, top);
    QTextStream out(stdout);
    if (args.has("--json")) {
        out << QJsonDocument(reportJson(report, *loaded, input)).toJson(QJsonDocument::Indented);
        return 0;
    }
    out << "sinks: " << loaded->source << " · " << report.tokens << " tokens · "
        << backendName(loaded->model->backend().kind()) << "\n";
    printActivations(out, report, input);
    out << "sink share (each head's mean share of attention on the first token):\n";
    printShares(out, report.sinkShare, report.heads);
    printAblations(out, report);
    return 0;
}
} // namespace

CliCommand sinksCommand() {
    return {
        QStringLiteral("sinks"),
        QStringLiteral("attention sinks and massive activations, and what taking the sink away "
                       "does"),
        {QStringLiteral("--model DIR (--text STR | --ids 1,2,3) [--top K] [--variant SPEC.json] "
                        "[--backend cpu|vulkan] [--vulkan-device SEL] [--json]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, a zoo model's name, or a Hugging Face cache folder or cached "
          "ORG/NAME id, read offline"},
         revisionOption(),
         {"--text", "STR", "the text to run, tokenized with the checkpoint's special tokens"},
         {"--ids", "1,2,3", "token ids to run as they are, instead of a text"},
         {"--top", "K",
          "the largest activations kept per layer, and zeroed by the zero-massive ablation, 1 "
          "to 1000 (default 4)"},
         {"--variant", "SPEC.json",
          "run every pass with these X-former options (docs/variants.md)"},
         backendOption(),
         vulkanDeviceOption(),
         {"--json", {}, "print the activations, shares and ablations as JSON on stdout"}},
        {QStringLiteral("headlight sinks --model rope --text 'The key is 7. The key is'"),
         QStringLiteral("headlight sinks --model tests/data/models/gpt2 --ids 5,9,17,4,9 --top 8 "
                        "--json")},
        &runSinks,
    };
}
} // namespace headlight::app
