// `headlight heads`: every head of a checkpoint scored for the roles of docs/head-roles.md
// (previous-token, duplicate-token and induction as TransformerLens's head detector scores them,
// the best fixed offset, the first-token sink) over a probe set: repeated random tokens drawn
// with a seed, or the ids of a --probe file; with --pattern, the user's own pattern; with
// --circuits, the scores read from the weights (cli_heads_circuits.h). Its options:
// headsCommand() at the end.
#include "analysis/head_role_probes.h"
#include "cli.h"
#include "cli_args.h"
#include "cli_backend.h"
#include "cli_heads_circuits.h"
#include "io/hub_cache.h"
#include "model/transformer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

namespace headlight::app {
namespace {

struct ProbeSet {
    std::vector<std::vector<int32_t>> ids;
    QString file;   // the --probe file; empty for generated probes
    int seed = 0;   // generated probes only
    int length = 0; // generated probes only: the random tokens before the repeat
};

// A JSON file of `flag` that must hold a non-empty list of lists.
QJsonArray readListOfLists(const char* flag, const QString& path, const char* what) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw CliError(std::string(flag) + " " + path.toStdString() + ": cannot be read (" +
                       file.errorString().toStdString() + ")");
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    const auto refuse = [&](const std::string& why) {
        return CliError(std::string(flag) + " " + path.toStdString() + ": " + why);
    };
    if (error.error != QJsonParseError::NoError)
        throw refuse("not JSON (" + error.errorString().toStdString() + " at byte " +
                     std::to_string(error.offset) + ")");
    if (!document.isArray() || document.array().isEmpty())
        throw refuse(std::string("must be a non-empty JSON list of ") + what);
    return document.array();
}

// --probe FILE: a JSON list of token-id lists, taken as they are.
std::vector<std::vector<int32_t>> readProbeFile(const QString& path) {
    const QJsonArray lists = readListOfLists("--probe", path, "token-id lists");
    const auto refuse = [&](const std::string& why) {
        return CliError("--probe " + path.toStdString() + ": " + why);
    };
    std::vector<std::vector<int32_t>> probes;
    for (qsizetype p = 0; p < lists.size(); ++p) {
        if (!lists[p].isArray())
            throw refuse("probe " + std::to_string(p) + " is not a list of token ids");
        std::vector<int32_t> ids;
        for (const QJsonValue& value : lists[p].toArray()) {
            const double number = value.toDouble(std::nan(""));
            if (!value.isDouble() || number != std::floor(number) || number < 0 ||
                number > 2147483647.0)
                throw refuse("probe " + std::to_string(p) +
                             " holds something other than a token "
                             "id (a non-negative integer)");
            ids.push_back(int32_t(number));
        }
        probes.push_back(std::move(ids));
    }
    return probes;
}

// --pattern FILE: T rows of T numbers, the first row query 0's weights on keys 0..T-1.
analysis::CustomPattern readPatternFile(const QString& path) {
    const QJsonArray rows = readListOfLists("--pattern", path, "rows of numbers");
    const auto refuse = [&](const std::string& why) {
        return CliError("--pattern " + path.toStdString() + ": " + why);
    };
    analysis::CustomPattern pattern;
    pattern.tokens = rows.size();
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const QJsonArray row = rows[i].toArray();
        if (!rows[i].isArray() || row.size() != rows.size())
            throw refuse("row " + std::to_string(i) + " is not a list of " +
                         std::to_string(rows.size()) + " numbers (the pattern is square)");
        for (const QJsonValue& value : row) {
            if (!value.isDouble()) throw refuse("row " + std::to_string(i) + " holds a non-number");
            pattern.weights.push_back(float(value.toDouble()));
        }
    }
    try {
        analysis::checkCustomPattern(pattern);
    } catch (const std::invalid_argument& error) {
        throw refuse(error.what());
    }
    return pattern;
}

// Every probe must have the pattern's T tokens, as detect_head asks of a pattern tensor.
void checkProbesFitPattern(const ProbeSet& probes, const analysis::CustomPattern& pattern) {
    const auto t = std::to_string(pattern.tokens);
    const std::string remedy = probes.file.isEmpty()
                                   ? ": give --length " + std::to_string(pattern.tokens / 2) +
                                         " (generated probes repeat it twice) or --probe FILE"
                                   : ": every probe needs " + t;
    for (std::size_t p = 0; p < probes.ids.size(); ++p)
        if (int64_t(probes.ids[p].size()) != pattern.tokens)
            throw CliError("probe " + std::to_string(p) + " has " +
                           std::to_string(probes.ids[p].size()) + " tokens but the --pattern is " +
                           t + " x " + t + remedy);
}

// TransformerLens's detect_head takes 1 < T < n_ctx; ids must be in the vocabulary.
void checkProbes(const std::vector<std::vector<int32_t>>& probes, const ModelSpec& spec) {
    for (std::size_t p = 0; p < probes.size(); ++p) {
        const auto tokens = int64_t(probes[p].size());
        const std::string which = "probe " + std::to_string(p) + " has " + std::to_string(tokens) +
                                  " token" + (tokens == 1 ? "" : "s");
        if (tokens < 2) throw CliError(which + ": a probe needs at least 2");
        if (spec.maxPositions > 0 && tokens >= spec.maxPositions)
            throw CliError(which + ": a probe must be shorter than the model's context of " +
                           std::to_string(spec.maxPositions) + " positions");
        for (int32_t id : probes[p])
            if (id >= spec.vocabSize)
                throw CliError("probe " + std::to_string(p) + " holds id " + std::to_string(id) +
                               ", outside the model's vocabulary of " +
                               std::to_string(spec.vocabSize));
    }
}

ProbeSet probeSet(const CliArgs& args, const ModelSpec& spec) {
    ProbeSet set;
    if (args.has("--probe")) {
        for (const char* flag : {"--seed", "--probes", "--length"})
            if (args.has(flag))
                throw CliError(std::string(flag) + " shapes generated probes: leave it out with "
                                                   "--probe FILE");
        set.file = args.value("--probe");
        set.ids = readProbeFile(set.file);
    } else {
        set.seed = args.integer("--seed", 0, 0, 2147483647);
        const int count = args.integer("--probes", 8, 1, 1000);
        set.length = args.integer("--length", 20, 1, 100000);
        if (spec.maxPositions > 0 && 2 * int64_t(set.length) >= spec.maxPositions)
            throw CliError("the model's context of " + std::to_string(spec.maxPositions) +
                           " positions is too small for probes of " +
                           std::to_string(2 * set.length) + " tokens (--length " +
                           std::to_string(set.length) + " repeated twice): give --length below " +
                           std::to_string((spec.maxPositions + 1) / 2));
        try {
            set.ids = analysis::repeatedRandomProbes(uint64_t(set.seed), count, set.length,
                                                     spec.vocabSize, spec.padTokenId);
        } catch (const std::invalid_argument& error) {
            throw CliError(std::string(error.what()) + ": give a smaller --length");
        }
    }
    checkProbes(set.ids, spec);
    return set;
}

QJsonObject probeJson(const ProbeSet& probes) {
    if (!probes.file.isEmpty()) return {{"file", probes.file}, {"count", int(probes.ids.size())}};
    return {{"seed", probes.seed}, {"count", int(probes.ids.size())}, {"length", probes.length}};
}

QString probeLine(const ProbeSet& probes) {
    if (!probes.file.isEmpty())
        return QStringLiteral("probes: %1 sequences from %2")
            .arg(probes.ids.size())
            .arg(probes.file);
    return QStringLiteral("probes: %1 generated (seed %2, %3 random tokens repeated twice)")
        .arg(probes.ids.size())
        .arg(probes.seed)
        .arg(probes.length);
}

QString score(double value) {
    return QString::number(value, 'f', 3);
}

// What one run scored: the probes' roles, and the weights' circuits when asked.
struct HeadsReport {
    ProbeSet probes;
    QString patternFile; // empty without --pattern
    QString variantFile; // empty without --variant
    std::vector<analysis::HeadRoleScores> roles;
    std::optional<CircuitScores> circuits;
};

void printTable(const HeadsReport& report, int heads) {
    QTextStream out(stdout);
    out << probeLine(report.probes) << "\n";
    if (!report.variantFile.isEmpty()) out << "variant: " << report.variantFile << "\n";
    const bool custom = !report.patternFile.isEmpty();
    const bool copying = report.circuits && !report.circuits->copying.empty();
    out << "layer  head  prev-token  dup-token  induction  positional (offset)  sink"
        << (custom ? "  custom" : "") << (copying ? "  copying" : "") << "\n";
    for (std::size_t i = 0; i < report.roles.size(); ++i) {
        const analysis::HeadRoleScores& s = report.roles[i];
        out << QString::number(int(i) / heads).rightJustified(5) << "  "
            << QString::number(int(i) % heads).rightJustified(4) << "  "
            << score(s.previousToken).rightJustified(10) << "  "
            << score(s.duplicateToken).rightJustified(9) << "  "
            << score(s.induction).rightJustified(9) << "  "
            << score(s.positional).rightJustified(10) << " (" << QString::number(s.positionalOffset)
            << ")" << QString(6, ' ') << score(s.sink).rightJustified(5);
        if (custom) out << "  " << score(s.custom.value_or(NAN)).rightJustified(6);
        if (copying)
            out << "  " << score(copyingOf(*report.circuits, i).value_or(NAN)).rightJustified(7);
        out << "\n";
    }
    if (custom) out << "custom: the pattern of " << report.patternFile << "\n";
    if (report.circuits) printCircuits(out, *report.circuits);
}

QJsonObject headJson(const HeadsReport& report, std::size_t i, int heads) {
    const analysis::HeadRoleScores& s = report.roles[i];
    QJsonObject scores{{"previous_token", s.previousToken},
                       {"duplicate_token", s.duplicateToken},
                       {"induction", s.induction},
                       {"positional", s.positional},
                       {"positional_offset", s.positionalOffset},
                       {"sink", s.sink}};
    if (s.custom) scores["custom"] = *s.custom;
    if (report.circuits) {
        const std::optional<double> copying = copyingOf(*report.circuits, i);
        scores["copying"] = copying ? QJsonValue(*copying) : QJsonValue(QJsonValue::Null);
    }
    return {{"layer", int(i) / heads}, {"head", int(i) % heads}, {"scores", scores}};
}

QJsonObject scoresJson(const HeadsReport& report, int heads, const std::string& folder,
                       const TransformerModel& model) {
    QJsonArray rows;
    for (std::size_t i = 0; i < report.roles.size(); ++i)
        rows.append(headJson(report, i, heads));
    QJsonObject json{{"model", QString::fromStdString(folder)},
                     {"backend", backendName(model.backend().kind())},
                     {"probe", probeJson(report.probes)},
                     {"heads", rows}};
    if (!report.patternFile.isEmpty()) json["pattern"] = report.patternFile;
    if (!report.variantFile.isEmpty()) json["variant"] = report.variantFile;
    if (report.circuits) json["circuits"] = circuitsJson(*report.circuits);
    return json;
}

int runHeads(const CliArgs& args) {
    const std::string folder = io::resolveModel(args.model().toStdString()).folder;
    HeadsReport report;
    analysis::CustomPattern pattern;
    if (args.has("--pattern")) {
        report.patternFile = args.value("--pattern");
        pattern = readPatternFile(report.patternFile);
    }
    if (args.has("--variant")) report.variantFile = args.value("--variant");
    const variants::VariantSpec variant =
        args.has("--variant") ? variants::loadVariantSpec(args.value("--variant").toStdString())
                              : variants::VariantSpec{};
    // Why the probes before the weights: a bad probe set is refused before minutes of circuits,
    // and the circuits before the model: their widened weights are freed before it loads.
    report.probes = probeSet(args, loadModelConfig(folder));
    if (!pattern.weights.empty()) checkProbesFitPattern(report.probes, pattern);
    if (args.has("--circuits")) report.circuits = scoreCircuits(folder);
    OpenedBackend opened = openChosenBackend(args);
    std::unique_ptr<TransformerModel> model;
    runWithCpuFallback(opened, model, [&] {
        model = loadModel(folder, *opened.backend);
        report.roles = analysis::scoreProbeRoles(*model, report.probes.ids, pattern, variant);
    });
    if (!opened.note.empty()) std::fprintf(stderr, "headlight heads: %s\n", opened.note.c_str());
    const int heads = model->spec().heads;
    if (args.has("--json"))
        QTextStream(stdout) << QJsonDocument(scoresJson(report, heads, folder, *model))
                                   .toJson(QJsonDocument::Indented);
    else
        printTable(report, heads);
    return 0;
}
} // namespace

CliCommand headsCommand() {
    return {
        QStringLiteral("heads"),
        QStringLiteral("score every head's role: previous-token, duplicate, induction, "
                       "positional, sink"),
        {QStringLiteral(
            "--model DIR [--probe FILE | [--seed N] [--probes N] [--length N]] "
            "[--pattern FILE] [--circuits] [--variant SPEC.json] [--backend cpu|vulkan] "
            "[--vulkan-device SEL] [--json]")},
        {},
        {{"--model", "DIR",
          "the checkpoint folder, a zoo model's name, or a Hugging Face cache folder or cached "
          "ORG/NAME id, read offline"},
         revisionOption(),
         {"--probe", "FILE",
          "score these token ids instead of generated probes: a JSON list of id lists, each "
          "run as it is (no special tokens), from 2 tokens to one less than the model's context"},
         {"--seed", "N",
          "the seed of the generated probes, 0 to 2147483647 (default 0); the same seed gives "
          "the same ids on every run"},
         {"--probes", "N", "how many probes to generate, 1 to 1000 (default 8)"},
         {"--length", "N",
          "distinct random tokens per generated probe, then repeated once (default 20: 40 "
          "tokens); twice it must stay below the model's context"},
         {"--pattern", "FILE",
          "also score every head on your own pattern: a JSON list of T rows of T numbers "
          "(query by key, lower triangular, usually 0 and 1), scored as TransformerLens's "
          "detect_head scores a pattern tensor; every probe must have T tokens"},
         {"--circuits",
          {},
          "also score from the weights: each head's copying score and the Q-, K- and "
          "V-composition between heads of different layers (Elhage et al. 2021); costs about "
          "layers² · hidden³ multiply-adds"},
         {"--variant", "SPEC.json",
          "run the probes with these X-former options (docs/variants.md): which variants keep "
          "an induction head?"},
         backendOption(),
         vulkanDeviceOption(),
         {"--json", {}, "print the probe set and every head's scores as JSON on stdout"}},
        {QStringLiteral("headlight heads --model rope"),
         QStringLiteral(
             "headlight heads --model tests/data/models/gpt2 --probe probes.json --json"),
         QStringLiteral("headlight heads --model copy --circuits"),
         QStringLiteral("headlight heads --model resources/models/copy --seed 3 --probes 16 "
                        "--length 12 --backend cpu")},
        &runHeads,
    };
}
} // namespace headlight::app
