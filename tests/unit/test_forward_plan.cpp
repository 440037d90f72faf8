// The ForwardPlan (core/variants/forward_plan.h): every pair of the options that choose or
// constrain the depth loop is either refused with its exact one-line reason or planned onto the
// loop that runs it; and what a new user tries on the zoo checkpoints (early exit on a Universal
// Transformer, drop_ffn on reversible layers, a sparse mask on ACT) is refused the same way by
// forward(), or runs.
#include "backend/backend.h"
#include "error_of.h"
#include "model/transformer.h"
#include "variants/forward_plan.h"

#include <QTest>
#include <cmath>
#include <map>

using namespace headlight;
using variants::BlockSpec;
using variants::VariantSpec;

namespace {

// A causal zoo model with pre placement, which every option alone can run.
ModelSpec baseModel() {
    ModelSpec model;
    model.architecture = Architecture::Headlight;
    model.vocabSize = 64, model.hidden = 32, model.layers = 4, model.heads = 4, model.kvHeads = 4;
    model.headDim = 8, model.intermediate = 64, model.maxPositions = 32;
    model.causal = true, model.tieEmbeddings = true;
    model.zoo.block = BlockSpec{};
    model.zoo.block->placement = BlockSpec::Placement::Pre;
    return model;
}

variants::SparseMask bandMask() {
    variants::MaskPart band;
    band.kind = variants::MaskPart::Kind::Band;
    band.window = 1;
    return {"", {band}, 0};
}

struct Option {
    const char* name;
    void (*apply)(ModelSpec& model, VariantSpec& variant);
};

// The options, applied to the model's block (as its config would) or to the requested variant.
const Option kOptions[] = {
    {"act", [](ModelSpec& m, VariantSpec&) { m.zoo.block->actSteps = 3; }},
    {"reversible", [](ModelSpec& m, VariantSpec&) { m.zoo.block->reversible = true; }},
    {"recurrence",
     [](ModelSpec&, VariantSpec& v) {
         v.recurrence = variants::Recurrence{2, 2, 0, 2};
     }},
    {"funnel",
     [](ModelSpec& m, VariantSpec&) {
         m.zoo.block->funnelBlocks = {2, 2};
         m.causal = false;
     }},
    {"early_exit",
     [](ModelSpec&, VariantSpec& v) {
         v.earlyExit.criterion = variants::EarlyExit::Criterion::Saturation;
         v.earlyExit.threshold = 0.9f;
     }},
    {"macaron", [](ModelSpec& m, VariantSpec&) { m.zoo.block->order = BlockSpec::Order::Macaron; }},
    {"sandwich",
     [](ModelSpec& m, VariantSpec&) {
         m.zoo.block->order = BlockSpec::Order::Sandwich;
         m.zoo.block->sandwich = 1;
     }},
    {"drop_ffn", [](ModelSpec&, VariantSpec& v) { v.dropFfn = true; }},
    {"rezero",
     [](ModelSpec& m, VariantSpec&) { m.zoo.block->residual = BlockSpec::Residual::ReZero; }},
    {"gtrxl",
     [](ModelSpec& m, VariantSpec&) { m.zoo.block->residual = BlockSpec::Residual::Gtrxl; }},
    {"post",
     [](ModelSpec& m, VariantSpec&) { m.zoo.block->placement = BlockSpec::Placement::Post; }},
    {"experts", [](ModelSpec& m, VariantSpec&) { m.zoo.block->experts = 2; }},
    {"sparse_mask", [](ModelSpec&, VariantSpec& v) { v.mask = bandMask(); }},
};

// Two values of one config key cannot be asked for together.
bool sameKey(const QString& a, const QString& b) {
    const QStringList orders{"macaron", "sandwich"}, residuals{"rezero", "gtrxl"};
    return (orders.contains(a) && orders.contains(b)) ||
           (residuals.contains(a) && residuals.contains(b));
}

QString loopName(variants::DepthLoop loop) {
    switch (loop) {
    case variants::DepthLoop::Stack:
        return "stack";
    case variants::DepthLoop::AdaptiveComputation:
        return "act";
    case variants::DepthLoop::Reversible:
        return "reversible";
    case variants::DepthLoop::SegmentRecurrence:
        return "recurrence";
    case variants::DepthLoop::Funnel:
        return "funnel";
    }
    return "?";
}

QString routeName(variants::AttentionRoute route) {
    switch (route) {
    case variants::AttentionRoute::Fused:
        return "fused";
    case variants::AttentionRoute::Composed:
        return "composed";
    case variants::AttentionRoute::Segmented:
        return "segmented";
    }
    return "?";
}

// "runs <loop>, <route> attention[, early exit]", or the refusal.
QString outcome(const QStringList& names) {
    ModelSpec model = baseModel();
    VariantSpec variant;
    for (const Option& option : kOptions)
        if (names.contains(option.name)) option.apply(model, variant);
    variant.block = model.zoo.block; // as the effective variant of a zoo checkpoint
    try {
        const variants::ForwardPlan plan = variants::planForward(variant, model);
        return "runs " + loopName(plan.depth) + ", " + routeName(plan.attention) + " attention" +
               (plan.earlyExit ? ", early exit" : "");
    } catch (const variants::VariantError& error) {
        return QString::fromUtf8(error.what());
    }
}

const QString kRecurrence =
    "Transformer-XL recurrence runs plain softmax attention segment by segment; it does "
    "not combine with ";
const QString kFunnel =
    "funnel: the pooled stack runs softmax attention on rectangular maps; it does not "
    "combine with ";
const QString kLoops = "ACT, reversible layers or experts";
const QString kActReversible =
    "ACT repeats one shared layer and reversible layers run two streams through the "
    "stack; a model runs one of the two depth loops";
const QString kActExit =
    "early exit judges the layers of a plain stack; a Universal Transformer with ACT already "
    "halts each token with its own halting unit";
const QString kReversibleExit =
    "early exit copies a token's state up one residual stream; reversible layers run "
    "two, so it does not combine with them";
const QString kReversibleOrder =
    "reversible layers pair each layer's attention with its own FFN; they do not "
    "combine with the macaron or sandwich order";
const QString kReversibleDrop =
    "reversible layers need every FFN for their second stream; they do not combine "
    "with drop_ffn";
const QString kReversibleResidual =
    "reversible layers add each normed sub-layer to the other stream; they need "
    "pre placement and plain residuals (not post, ReZero or GTrXL)";
const QString kGatedPost =
    "the GTrXL gate mixes x with F(N(x)), so it needs pre placement; it does not combine "
    "with post";
const QString kEncoderRecurrence =
    "Transformer-XL recurrence is a language-model method (each segment reads "
    "earlier ones only), and headlight is not causal";

// Every pair of kOptions but two values of one key; "a + b" with a listed before b.
const std::map<QString, QString>& expectedPairs() {
    static const std::map<QString, QString> expected = {
        {"act + reversible", kActReversible},
        {"act + recurrence", kRecurrence + kLoops},
        {"act + funnel", kFunnel + kLoops},
        {"act + early_exit", kActExit},
        {"act + macaron", "runs act, fused attention"},
        {"act + sandwich", "runs act, fused attention"},
        {"act + drop_ffn", "runs act, fused attention"},
        {"act + rezero", "runs act, fused attention"},
        {"act + gtrxl", "runs act, fused attention"},
        {"act + post", "runs act, fused attention"},
        {"act + experts", "runs act, fused attention"},
        {"act + sparse_mask", "runs act, composed attention"},
        {"reversible + recurrence", kRecurrence + kLoops},
        {"reversible + funnel", kFunnel + kLoops},
        {"reversible + early_exit", kReversibleExit},
        {"reversible + macaron", kReversibleOrder},
        {"reversible + sandwich", kReversibleOrder},
        {"reversible + drop_ffn", kReversibleDrop},
        {"reversible + rezero", kReversibleResidual},
        {"reversible + gtrxl", kReversibleResidual},
        {"reversible + post", kReversibleResidual},
        {"reversible + experts", "runs reversible, fused attention"},
        {"reversible + sparse_mask", "runs reversible, composed attention"},
        {"recurrence + funnel", kEncoderRecurrence},
        {"recurrence + early_exit", kRecurrence + "early exit"},
        {"recurrence + macaron", "runs recurrence, segmented attention"},
        {"recurrence + sandwich", "runs recurrence, segmented attention"},
        {"recurrence + drop_ffn", "runs recurrence, segmented attention"},
        {"recurrence + rezero", "runs recurrence, segmented attention"},
        {"recurrence + gtrxl", "runs recurrence, segmented attention"},
        {"recurrence + post", "runs recurrence, segmented attention"},
        {"recurrence + experts", kRecurrence + kLoops},
        {"recurrence + sparse_mask", kRecurrence + "a sparse mask"},
        {"funnel + early_exit", kFunnel + "early exit"},
        {"funnel + macaron", kFunnel + "the macaron or sandwich order"},
        {"funnel + sandwich", kFunnel + "the macaron or sandwich order"},
        {"funnel + drop_ffn", "runs funnel, fused attention"},
        {"funnel + rezero", "runs funnel, fused attention"},
        {"funnel + gtrxl", "runs funnel, fused attention"},
        {"funnel + post", "runs funnel, fused attention"},
        {"funnel + experts", kFunnel + kLoops},
        {"funnel + sparse_mask", kFunnel + "a sparse mask"},
        {"early_exit + macaron", "runs stack, fused attention, early exit"},
        {"early_exit + sandwich", "runs stack, fused attention, early exit"},
        {"early_exit + drop_ffn", "runs stack, fused attention, early exit"},
        {"early_exit + rezero", "runs stack, fused attention, early exit"},
        {"early_exit + gtrxl", "runs stack, fused attention, early exit"},
        {"early_exit + post", "runs stack, fused attention, early exit"},
        {"early_exit + experts", "runs stack, fused attention, early exit"},
        {"early_exit + sparse_mask", "runs stack, composed attention, early exit"},
        {"macaron + drop_ffn", "runs stack, fused attention"},
        {"macaron + rezero", "runs stack, fused attention"},
        {"macaron + gtrxl", "runs stack, fused attention"},
        {"macaron + post", "runs stack, fused attention"},
        {"macaron + experts", "runs stack, fused attention"},
        {"macaron + sparse_mask", "runs stack, composed attention"},
        {"sandwich + drop_ffn", "runs stack, fused attention"},
        {"sandwich + rezero", "runs stack, fused attention"},
        {"sandwich + gtrxl", "runs stack, fused attention"},
        {"sandwich + post", "runs stack, fused attention"},
        {"sandwich + experts", "runs stack, fused attention"},
        {"sandwich + sparse_mask", "runs stack, composed attention"},
        {"drop_ffn + rezero", "runs stack, fused attention"},
        {"drop_ffn + gtrxl", "runs stack, fused attention"},
        {"drop_ffn + post", "runs stack, fused attention"},
        {"drop_ffn + experts", "runs stack, fused attention"},
        {"drop_ffn + sparse_mask", "runs stack, composed attention"},
        {"rezero + post", "runs stack, fused attention"},
        {"rezero + experts", "runs stack, fused attention"},
        {"rezero + sparse_mask", "runs stack, composed attention"},
        {"gtrxl + post", kGatedPost},
        {"gtrxl + experts", "runs stack, fused attention"},
        {"gtrxl + sparse_mask", "runs stack, composed attention"},
        {"post + experts", "runs stack, fused attention"},
        {"post + sparse_mask", "runs stack, composed attention"},
        {"experts + sparse_mask", "runs stack, composed attention"},
    };
    return expected;
}

ModelInput fiveTokens() {
    ModelInput input;
    input.ids = {1, 5, 9, 13, 17};
    return input;
}

QString zooFolder(const char* name) {
    return QStringLiteral(HEADLIGHT_TEST_DATA "/zoo/") + name;
}

QString shippedFolder(const char* name) {
    return QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/") + name;
}
} // namespace

class TestForwardPlan : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void eachOptionAloneRuns_data() {
        QTest::addColumn<QString>("expected");
        QTest::newRow("act") << "runs act, fused attention";
        QTest::newRow("reversible") << "runs reversible, fused attention";
        QTest::newRow("recurrence") << "runs recurrence, segmented attention";
        QTest::newRow("funnel") << "runs funnel, fused attention";
        QTest::newRow("early_exit") << "runs stack, fused attention, early exit";
        QTest::newRow("sparse_mask") << "runs stack, composed attention";
        for (const char* plain :
             {"macaron", "sandwich", "drop_ffn", "rezero", "gtrxl", "post", "experts"})
            QTest::newRow(plain) << "runs stack, fused attention";
    }
    void eachOptionAloneRuns() {
        QFETCH(QString, expected);
        QCOMPARE(outcome({QTest::currentDataTag()}), expected);
    }

    void everyPairIsPlannedOrRefused_data() {
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QString>("expected");
        std::size_t pairs = 0;
        const std::size_t count = std::size(kOptions);
        for (std::size_t a = 0; a < count; ++a)
            for (std::size_t b = a + 1; b < count; ++b) {
                const QString first = kOptions[a].name, second = kOptions[b].name;
                if (sameKey(first, second)) continue;
                const QString name = first + " + " + second;
                const auto found = expectedPairs().find(name);
                QTest::newRow(qPrintable(name))
                    << QStringList{first, second}
                    << (found == expectedPairs().end() ? "no expectation for " + name
                                                       : found->second);
                ++pairs;
            }
        QCOMPARE(pairs, expectedPairs().size());
    }
    void everyPairIsPlannedOrRefused() {
        QFETCH(QStringList, names);
        QFETCH(QString, expected);
        QCOMPARE(outcome(names), expected);
    }

    // The report that started the plan: early exit on the ut_act model ran and did nothing.
    void earlyExitOnAUniversalTransformerIsRefused() {
        auto backend = makeCpuBackend();
        const auto model = loadModel(shippedFolder("ut_act").toStdString(), *backend);
        VariantSpec variant;
        variant.earlyExit.criterion = variants::EarlyExit::Criterion::Entropy;
        variant.earlyExit.threshold = 1.0f;
        QCOMPARE(test::errorOf<variants::VariantError>(
                     [&] { model->forward(fiveTokens(), {}, variant); }),
                 kActExit);
    }

    void zooCheckpointsRefuseWhatTheirLoopCannotRun_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("expected");
        const QString saturation =
            R"({"early_exit": {"criterion": "saturation", "threshold": 0.9}})";
        QTest::newRow("reversible + early exit")
            << zooFolder("reversible_pre_rope") << saturation << kReversibleExit;
        QTest::newRow("reversible + drop_ffn")
            << zooFolder("reversible_pre_rope") << R"({"drop_ffn": true})" << kReversibleDrop;
        QTest::newRow("funnel + early exit")
            << zooFolder("funnel_encoder_2x2") << saturation << kFunnel + "early exit";
        QTest::newRow("act + early exit") << zooFolder("act_ut_post") << saturation << kActExit;
    }
    void zooCheckpointsRefuseWhatTheirLoopCannotRun() {
        QFETCH(QString, folder);
        QFETCH(QString, variant);
        QFETCH(QString, expected);
        auto backend = makeCpuBackend();
        const auto model = loadModel(folder.toStdString(), *backend);
        const VariantSpec spec = variants::parseVariantSpec(variant.toStdString());
        QCOMPARE(
            test::errorOf<variants::VariantError>([&] { model->forward(fiveTokens(), {}, spec); }),
            expected);
    }

    void zooCheckpointsRunWhatTheirLoopCan_data() {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("variant");
        QTest::addColumn<QString>("internal");
        const QString band = R"({"mask": {"parts": [{"kind": "band", "window": 1}]}})";
        QTest::newRow("act + drop_ffn")
            << zooFolder("act_ut_pre_early_stop") << R"({"drop_ffn": true})"
            << "ponder";
        QTest::newRow("act + sparse mask")
            << zooFolder("act_ut_pre_early_stop") << band << "ponder";
        QTest::newRow("reversible + sparse mask")
            << zooFolder("reversible_pre_rope") << band << "reconstruction_error";
        QTest::newRow("funnel + drop_ffn")
            << zooFolder("funnel_encoder_2x2") << R"({"drop_ffn": true})"
            << "funnel_length";
        QTest::newRow("macaron + early exit")
            << zooFolder("macaron_pre_rms_rope")
            << R"({"early_exit": {"criterion": "entropy", "threshold": 1}})"
            << "exit_layer";
    }
    void zooCheckpointsRunWhatTheirLoopCan() {
        QFETCH(QString, folder);
        QFETCH(QString, variant);
        QFETCH(QString, internal);
        auto backend = makeCpuBackend();
        const auto model = loadModel(folder.toStdString(), *backend);
        CaptureRequest capture;
        capture.internals = true;
        const Trace trace = model->forward(fiveTokens(), capture,
                                           variants::parseVariantSpec(variant.toStdString()));
        QVERIFY(trace.internals.count(internal.toStdString()) == 1);
        for (float v : trace.lastHiddenState.values())
            QVERIFY(std::isfinite(v));
    }
};

QTEST_GUILESS_MAIN(TestForwardPlan)
#include "test_forward_plan.moc"
