// JSON → VariantSpec. Strict on purpose: a misspelt key would otherwise silently leave a figure
// showing the vanilla model under a variant's name.
#include "variants/variant_spec.h"

#include "variants/sparse_mask.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

namespace headlight::variants {
namespace {

constexpr qint64 kMaxSpecBytes = 4'000'000;
constexpr int kMaxCount = 1'000'000;

// One JSON object whose keys are taken one by one; finish() rejects whatever was not taken.
class Fields {
public:
    Fields(const QJsonObject& object, std::string where) : object_(object), where_(std::move(where)) {}

    bool has(const char* key) const { return object_.contains(key); }
    std::string path(const char* key) const { return where_.empty() ? key : where_ + "." + key; }

    QJsonValue take(const char* key) {
        taken_.insert(key);
        return object_.value(key);
    }
    int integer(const char* key, int fallback, int min, int max = kMaxCount) {
        if (!has(key)) return (void)take(key), fallback;
        const QJsonValue v = take(key);
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d) || d < min || d > max)
            fail(key, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
        return int(d);
    }
    float number(const char* key, float fallback, double min, double max) {
        if (!has(key)) return (void)take(key), fallback;
        const QJsonValue v = take(key);
        if (!v.isDouble() || v.toDouble() < min || v.toDouble() > max)
            fail(key, "must be a number from " + std::to_string(min) + " to " + std::to_string(max));
        return float(v.toDouble());
    }
    bool boolean(const char* key, bool fallback) {
        if (!has(key)) return (void)take(key), fallback;
        const QJsonValue v = take(key);
        if (!v.isBool()) fail(key, "must be true or false");
        return v.toBool();
    }
    std::string text(const char* key, const std::string& fallback) {
        if (!has(key)) return (void)take(key), fallback;
        const QJsonValue v = take(key);
        if (!v.isString()) fail(key, "must be a string");
        return v.toString().toStdString();
    }
    QJsonObject object(const char* key) {
        const QJsonValue v = take(key);
        if (!v.isObject()) fail(key, "must be an object");
        return v.toObject();
    }
    std::vector<int> integers(const char* key, int min, int max) {
        std::vector<int> values;
        for (const QJsonValue& v : array(key)) {
            const double d = v.toDouble(std::nan(""));
            if (!v.isDouble() || d != std::floor(d) || d < min || d > max)
                fail(key, "must hold integers from " + std::to_string(min) + " to " + std::to_string(max));
            values.push_back(int(d));
        }
        return values;
    }
    std::vector<float> numbers(const char* key, double min, double max) {
        std::vector<float> values;
        for (const QJsonValue& v : array(key)) {
            if (!v.isDouble() || v.toDouble() < min || v.toDouble() > max)
                fail(key, "must hold numbers from " + std::to_string(min) + " to " + std::to_string(max));
            values.push_back(float(v.toDouble()));
        }
        return values;
    }
    // A square matrix written as a list of rows.
    std::vector<float> matrix(const char* key) {
        const QJsonArray rows = array(key);
        std::vector<float> values;
        for (const QJsonValue& row : rows) {
            if (!row.isArray() || row.toArray().size() != rows.size()) fail(key, "must be a square list of rows");
            for (const QJsonValue& v : row.toArray()) {
                if (!v.isDouble()) fail(key, "must hold numbers");
                values.push_back(float(v.toDouble()));
            }
        }
        return values;
    }
    void finish() const {
        for (const QString& key : object_.keys())
            if (!taken_.count(key.toStdString()))
                throw VariantError("variant spec: unknown key '" + path(key.toUtf8().constData()) + "'");
    }
    [[noreturn]] void fail(const char* key, const std::string& why) const {
        throw VariantError("variant spec: '" + path(key) + "' " + why);
    }

private:
    QJsonArray array(const char* key) {
        const QJsonValue v = take(key);
        if (!v.isArray()) fail(key, "must be a list");
        return v.toArray();
    }

    QJsonObject object_;
    std::string where_;
    std::set<std::string> taken_;
};

template <typename Enum>
struct Named {
    const char* name;
    Enum value;
};

template <typename Enum, std::size_t N>
Enum choose(Fields& fields, const char* key, const Named<Enum> (&names)[N], Enum fallback) {
    if (!fields.has(key)) return (void)fields.take(key), fallback;
    const std::string name = fields.text(key, "");
    std::string known;
    for (const auto& n : names) {
        if (name == n.name) return n.value;
        known += (known.empty() ? "" : ", ") + std::string(n.name);
    }
    fields.fail(key, "is '" + name + "'; known: " + known);
}

constexpr Named<AttentionKernel> kKernels[] = {
    {"softmax", AttentionKernel::Softmax},     {"lsh", AttentionKernel::Lsh},
    {"favor", AttentionKernel::Favor},         {"rfa", AttentionKernel::Rfa},
    {"linear_elu", AttentionKernel::LinearElu}, {"probsparse", AttentionKernel::ProbSparse},
    {"linformer", AttentionKernel::Linformer}, {"memory_compressed", AttentionKernel::MemoryCompressed},
    {"nystrom", AttentionKernel::Nystrom},
};
constexpr Named<Prior::Kind> kPriors[] = {
    {"none", Prior::Kind::None},   {"residual", Prior::Kind::Residual}, {"residual_mean", Prior::Kind::ResidualMean},
    {"share", Prior::Kind::Share}, {"gaussian", Prior::Kind::Gaussian},
};
constexpr Named<PositionKind> kPositions[] = {
    {"checkpoint", PositionKind::Checkpoint}, {"none", PositionKind::None}, {"sinusoidal", PositionKind::Sinusoidal},
    {"alibi", PositionKind::Alibi},           {"learned", PositionKind::Learned}, {"rope", PositionKind::Rope},
    {"t5", PositionKind::T5},
    {"xl", PositionKind::Xl},
};
constexpr Named<BlockSpec::Norm> kNorms[] = {
    {"layer", BlockSpec::Norm::Layer},
    {"rms", BlockSpec::Norm::Rms},
    {"scale", BlockSpec::Norm::Scale},
    {"ada", BlockSpec::Norm::Ada},
};
constexpr Named<BlockSpec::Placement> kPlacements[] = {
    {"post", BlockSpec::Placement::Post},
    {"pre", BlockSpec::Placement::Pre},
};
constexpr Named<BlockSpec::Residual> kResiduals[] = {
    {"plain", BlockSpec::Residual::Plain},
    {"rezero", BlockSpec::Residual::ReZero},
    {"gtrxl", BlockSpec::Residual::Gtrxl},
};
constexpr Named<BlockSpec::Order> kOrders[] = {
    {"standard", BlockSpec::Order::Standard},
    {"macaron", BlockSpec::Order::Macaron},
    {"sandwich", BlockSpec::Order::Sandwich},
};
constexpr Named<BlockSpec::Routing> kRoutings[] = {
    {"top_k", BlockSpec::Routing::TopK},
    {"switch", BlockSpec::Routing::Switch},
    {"hash", BlockSpec::Routing::Hash},
};
const char* const kFfnActivations[] = {"relu", "gelu", "gelu_tanh", "swish", "glu", "geglu", "swiglu", "reglu"};
constexpr Named<EarlyExit::Criterion> kCriteria[] = {
    {"none", EarlyExit::Criterion::None},
    {"entropy", EarlyExit::Criterion::Entropy},
    {"patience", EarlyExit::Criterion::Patience},
    {"softmax_response", EarlyExit::Criterion::SoftmaxResponse},
    {"saturation", EarlyExit::Criterion::Saturation},
};
constexpr Named<MaskPart::Kind> kMaskParts[] = {
    {"global", MaskPart::Kind::Global},   {"band", MaskPart::Kind::Band},
    {"dilated", MaskPart::Kind::Dilated}, {"random", MaskPart::Kind::Random},
    {"block", MaskPart::Kind::Block},     {"random_block", MaskPart::Kind::RandomBlock},
    {"strided", MaskPart::Kind::Strided}, {"summary", MaskPart::Kind::Summary},
    {"local", MaskPart::Kind::Local},
};

void parseAttention(Fields fields, VariantSpec& spec) {
    spec.kernel = choose(fields, "kernel", kKernels, AttentionKernel::Softmax);
    spec.features = fields.integer("features", spec.features, 1, 65536);
    spec.orthogonal = fields.boolean("orthogonal", spec.orthogonal);
    spec.lshBuckets = fields.integer("buckets", spec.lshBuckets, 2, 4096);
    if (spec.lshBuckets % 2) fields.fail("buckets", "must be even (angular LSH hashes to ±rotations)");
    spec.lshRounds = fields.integer("rounds", spec.lshRounds, 1, 16);
    spec.lshChunk = fields.integer("chunk", spec.lshChunk, 1, 65536);
    spec.sharedQk = fields.boolean("shared_qk", spec.sharedQk);
    spec.probSparseFactor = fields.number("factor", spec.probSparseFactor, 0.1, 1000.0);
    spec.projected = fields.integer("projected", spec.projected, 1, 65536);
    spec.landmarks = fields.integer("landmarks", spec.landmarks, 1, 65536);
    spec.pinvIterations = fields.integer("pinv_iterations", spec.pinvIterations, 1, 100);
    fields.finish();
}

MaskPart parseMaskPart(Fields fields) {
    MaskPart part;
    part.kind = choose(fields, "kind", kMaskParts, MaskPart::Kind::Band);
    part.window = fields.integer("window", 0, 0);
    part.dilation = fields.integer("dilation", 1, 1);
    part.count = fields.integer("count", 0, 0);
    part.size = fields.integer("size", 1, 1);
    part.stride = fields.integer("stride", 1, 1);
    if (fields.has("tokens")) part.tokens = fields.integers("tokens", -kMaxCount, kMaxCount);
    else fields.take("tokens");
    if (fields.has("windows")) part.windows = fields.integers("windows", 0, kMaxCount);
    else fields.take("windows");
    fields.finish();
    return part;
}

SparseMask parseMask(Fields fields) {
    SparseMask mask;
    mask.seed = uint64_t(fields.integer("seed", 0, 0, 2'000'000'000));
    if (fields.has("parts")) {
        const QJsonValue parts = fields.take("parts");
        if (!parts.isArray()) fields.fail("parts", "must be a list");
        int index = 0;
        for (const QJsonValue& part : parts.toArray()) {
            const std::string where = fields.path("parts") + "[" + std::to_string(index++) + "]";
            if (!part.isObject()) throw VariantError("variant spec: '" + where + "' must be an object");
            mask.parts.push_back(parseMaskPart(Fields(part.toObject(), where)));
        }
        if (fields.has("preset")) fields.fail("preset", "cannot be combined with 'parts'");
        fields.take("preset");
        fields.finish();
        return mask;
    }
    if (!fields.has("preset")) fields.fail("preset", "is missing: give a preset or a list of parts");
    mask.preset = fields.text("preset", "");
    PresetOptions options;
    options.window = fields.integer("window", options.window, 0);
    options.dilation = fields.integer("dilation", options.dilation, 1);
    options.block = fields.integer("block", options.block, 1);
    options.random = fields.integer("random", options.random, 0);
    options.stride = fields.integer("stride", options.stride, 1);
    options.summary = fields.integer("summary", options.summary, 0);
    options.memory = fields.integer("memory", options.memory, 0);
    if (fields.has("global")) options.global = fields.integers("global", -kMaxCount, kMaxCount);
    else fields.take("global");
    if (fields.has("windows")) options.windows = fields.integers("windows", 0, kMaxCount);
    else fields.take("windows");
    fields.finish();
    mask.parts = presetParts(mask.preset, options);
    return mask;
}

Prior parsePrior(Fields fields) {
    Prior prior;
    prior.kind = choose(fields, "kind", kPriors, Prior::Kind::None);
    prior.every = fields.integer("every", prior.every, 1);
    prior.sigma = fields.number("sigma", prior.sigma, 1e-3, 1e6);
    fields.finish();
    return prior;
}

AdaptiveSpan parseSpan(Fields fields) {
    AdaptiveSpan span;
    span.enabled = true;
    if (!fields.has("z")) fields.fail("z", "is missing: give the span z in tokens (one value or one per head)");
    span.spans = fields.numbers("z", 0.0, 1e7);
    if (span.spans.empty()) fields.fail("z", "is empty");
    span.ramp = fields.number("ramp", span.ramp, 1e-3, 1e7);
    fields.finish();
    return span;
}

TalkingHeads parseTalkingHeads(Fields fields) {
    TalkingHeads talking;
    talking.enabled = true;
    if (fields.has("logits")) talking.logitsMix = fields.matrix("logits");
    else fields.take("logits");
    if (fields.has("weights")) talking.weightsMix = fields.matrix("weights");
    else fields.take("weights");
    fields.finish();
    return talking;
}

constexpr Named<WeightRule::Kind> kRules[] = {
    {"softmax", WeightRule::Kind::Softmax},
    {"sink_softmax", WeightRule::Kind::SinkSoftmax},
    {"sigmoid", WeightRule::Kind::Sigmoid},
};

WeightRule parseRule(Fields fields) {
    WeightRule rule;
    if (!fields.has("kind"))
        fields.fail("kind", "is missing: give softmax, sink_softmax or sigmoid");
    rule.kind = choose(fields, "kind", kRules, rule.kind);
    rule.sink = fields.number("sink", rule.sink, -1e4, 1e4);
    if (fields.has("sink") && rule.kind != WeightRule::Kind::SinkSoftmax)
        fields.fail("sink", "belongs to the sink_softmax rule");
    if (fields.has("bias")) {
        if (rule.kind != WeightRule::Kind::Sigmoid)
            fields.fail("bias", "belongs to the sigmoid rule");
        rule.bias = fields.number("bias", 0.0f, -1e4, 1e4);
    } else {
        fields.take("bias");
    }
    fields.finish();
    return rule;
}

void parseNorm(Fields fields, BlockSpec& block) {
    block.norm = choose(fields, "kind", kNorms, block.norm);
    block.placement = choose(fields, "placement", kPlacements, block.placement);
    block.residual = choose(fields, "residual", kResiduals, block.residual);
    fields.finish();
}

void parseOrder(Fields fields, BlockSpec& block) {
    block.order = choose(fields, "kind", kOrders, block.order);
    block.sandwich = fields.integer("sandwich", block.sandwich, 0, 10'000);
    fields.finish();
}

void parseFfn(Fields fields, BlockSpec& block) {
    block.activation = fields.text("activation", block.activation);
    if (std::find(std::begin(kFfnActivations), std::end(kFfnActivations), block.activation) ==
        std::end(kFfnActivations))
        fields.fail("activation", "is '" + block.activation +
                                      "'; known: relu, gelu, gelu_tanh, swish, glu, geglu, swiglu, reglu");
    block.experts = fields.integer("experts", block.experts, 0, 4096);
    if (block.experts == 1) fields.fail("experts", "must be 0 (a dense FFN) or at least 2");
    block.routing = choose(fields, "routing", kRoutings, block.routing);
    block.topK = fields.integer("k", block.topK, 1, 4096);
    if (block.experts > 0 && block.topK > block.experts) fields.fail("k", "is larger than the number of experts");
    fields.finish();
}

void parseT5(Fields fields, BlockSpec& block) {
    block.t5Buckets = fields.integer("buckets", block.t5Buckets, 2, 4096);
    block.t5MaxDistance = fields.integer("max_distance", block.t5MaxDistance, 1, 10'000'000);
    fields.finish();
}

void parseAct(Fields fields, BlockSpec& block) {
    block.actSteps = fields.integer("max_steps", block.actSteps, 0, 1000);
    block.actThreshold = fields.number("threshold", block.actThreshold, 0.01, 1.0);
    fields.finish();
}

void parseFunnel(Fields fields, BlockSpec& block) {
    if (!fields.has("blocks"))
        fields.fail("blocks", "is missing: give the number of layers in each block");
    block.funnelBlocks = fields.integers("blocks", 1, 10'000);
    if (block.funnelBlocks.empty()) fields.fail("blocks", "must list at least one block");
    block.funnelStride = fields.integer("stride", block.funnelStride, 2, 1024);
    fields.finish();
}

// The architecture keys; present only in a zoo checkpoint's `headlight` section.
void parseBlock(Fields& fields, VariantSpec& spec) {
    const bool any = fields.has("norm") || fields.has("order") || fields.has("ffn") ||
                     fields.has("t5") || fields.has("act") || fields.has("reversible") ||
                     fields.has("funnel");
    BlockSpec block;
    if (fields.has("norm")) parseNorm(Fields(fields.object("norm"), "norm"), block);
    else fields.take("norm");
    if (fields.has("order")) parseOrder(Fields(fields.object("order"), "order"), block);
    else fields.take("order");
    if (fields.has("ffn")) parseFfn(Fields(fields.object("ffn"), "ffn"), block);
    else fields.take("ffn");
    if (fields.has("t5")) parseT5(Fields(fields.object("t5"), "t5"), block);
    else fields.take("t5");
    if (fields.has("act")) parseAct(Fields(fields.object("act"), "act"), block);
    else fields.take("act");
    block.reversible = fields.boolean("reversible", false);
    if (fields.has("funnel"))
        parseFunnel(Fields(fields.object("funnel"), "funnel"), block);
    else
        fields.take("funnel");
    if (any) spec.block = block;
}

EarlyExit parseEarlyExit(Fields fields) {
    EarlyExit exit;
    exit.criterion = choose(fields, "criterion", kCriteria, EarlyExit::Criterion::None);
    exit.threshold = fields.number("threshold", exit.threshold, -1e6, 1e6);
    exit.patience = fields.integer("patience", exit.patience, 1, 10'000);
    fields.finish();
    return exit;
}

Recurrence parseRecurrence(Fields fields) {
    Recurrence r;
    if (!fields.has("segment"))
        fields.fail("segment", "is missing: give the segment length in tokens");
    r.segment = fields.integer("segment", r.segment, 1, kMaxCount);
    r.memory = fields.integer("memory", r.memory, 0, kMaxCount);
    r.compressed = fields.integer("compressed", r.compressed, 0, kMaxCount);
    r.rate = fields.integer("rate", r.rate, 1, kMaxCount);
    // Why: whole segments enter and leave the memory, so what leaves pools into whole slots.
    if (r.memory % r.segment) fields.fail("memory", "must be a multiple of segment");
    if (r.compressed > 0 && r.segment % r.rate) fields.fail("rate", "must divide segment");
    fields.finish();
    return r;
}

KnnLm parseKnn(Fields fields) {
    KnnLm knn;
    if (!fields.has("datastore"))
        fields.fail("datastore", "is missing: give the text file the datastore is built from");
    knn.datastore = fields.text("datastore", "");
    if (knn.datastore.empty()) fields.fail("datastore", "is empty");
    knn.k = fields.integer("k", knn.k, 1, 4096);
    knn.lambda = fields.number("lambda", knn.lambda, 0.0, 1.0);
    knn.temperature = fields.number("temperature", knn.temperature, 1e-6, 1e9);
    fields.finish();
    return knn;
}
} // namespace

bool VariantSpec::needsComposedPath() const {
    return kernel != AttentionKernel::Softmax || mask || prior.kind != Prior::Kind::None ||
           span.enabled || talkingHeads.enabled || weightRule.kind != WeightRule::Kind::Softmax ||
           position == PositionKind::Alibi || position == PositionKind::T5;
}

bool VariantSpec::isVanilla() const {
    return !needsComposedPath() && position == PositionKind::Checkpoint && !dropFfn &&
           earlyExit.criterion == EarlyExit::Criterion::None && !knn && !block && !recurrence;
}

VariantSpec parseVariantSpec(const std::string& jsonText) {
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray::fromStdString(jsonText), &error);
    if (error.error != QJsonParseError::NoError)
        throw VariantError("variant spec: invalid JSON at byte " + std::to_string(error.offset) + ": " +
                           error.errorString().toStdString());
    if (!document.isObject()) throw VariantError("variant spec: the top level must be an object");
    Fields fields(document.object(), "");
    VariantSpec spec;
    if (fields.has("attention")) parseAttention(Fields(fields.object("attention"), "attention"), spec);
    else fields.take("attention");
    if (fields.has("seed")) spec.seed = uint64_t(fields.integer("seed", 0, 0, 2'000'000'000));
    else fields.take("seed");
    if (fields.has("mask")) spec.mask = parseMask(Fields(fields.object("mask"), "mask"));
    else fields.take("mask");
    if (fields.has("prior")) spec.prior = parsePrior(Fields(fields.object("prior"), "prior"));
    else fields.take("prior");
    if (fields.has("span")) spec.span = parseSpan(Fields(fields.object("span"), "span"));
    else fields.take("span");
    if (fields.has("talking_heads"))
        spec.talkingHeads = parseTalkingHeads(Fields(fields.object("talking_heads"), "talking_heads"));
    else fields.take("talking_heads");
    if (fields.has("attention_rule"))
        spec.weightRule = parseRule(Fields(fields.object("attention_rule"), "attention_rule"));
    else
        fields.take("attention_rule");
    spec.position = choose(fields, "position", kPositions, PositionKind::Checkpoint);
    spec.dropFfn = fields.boolean("drop_ffn", false);
    if (fields.has("early_exit"))
        spec.earlyExit = parseEarlyExit(Fields(fields.object("early_exit"), "early_exit"));
    else
        fields.take("early_exit");
    if (fields.has("recurrence"))
        spec.recurrence = parseRecurrence(Fields(fields.object("recurrence"), "recurrence"));
    else
        fields.take("recurrence");
    if (fields.has("knn"))
        spec.knn = parseKnn(Fields(fields.object("knn"), "knn"));
    else
        fields.take("knn");
    parseBlock(fields, spec);
    fields.finish();
    return spec;
}

VariantSpec loadVariantSpec(const std::string& path) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly)) throw VariantError("cannot read the variant spec " + path);
    if (file.size() > kMaxSpecBytes) throw VariantError("the variant spec " + path + " is larger than 4 MB");
    VariantSpec spec = parseVariantSpec(file.readAll().toStdString());
    // Why: a spec names its datastore next to itself, wherever the command runs from.
    if (spec.knn)
        spec.knn->datastore =
            QFileInfo(file).absoluteDir().absoluteFilePath(QString::fromStdString(spec.knn->datastore)).toStdString();
    return spec;
}
} // namespace headlight::variants
