// The attention rules of item 21 (variants/sink_softmax.h, sigmoid_attention.h) as options: what
// `attention_rule` reads and refuses, that a rule takes the composed route and merges over a zoo
// checkpoint's settings, the sigmoid bias −ln n, and the one-line refusals of combinations that
// cannot run it (kernels that never form probabilities, adaptive span, segment recurrence, the
// funnel, Gemma's fused-only stack, the atlas). The numbers are checked against the PyTorch goldens
// (tests/backends/test_variant_goldens) and the op against its formula (tests/vulkan).
#include "variants/applicability.h"
#include "variants/atlas_attention.h"
#include "variants/forward_plan.h"
#include "variants/sigmoid_attention.h"
#include "variants/variant_merge.h"
#include "variants/variant_spec.h"

#include <QTest>
#include <cmath>

using namespace headlight;
using variants::VariantSpec;
using variants::WeightRule;

namespace {
QString parseError(const char* json) {
    try {
        variants::parseVariantSpec(json);
    } catch (const variants::VariantError& e) {
        return e.what();
    }
    return "no error";
}

QString planError(const VariantSpec& variant, const ModelSpec& model) {
    try {
        variants::planForward(variant, model);
    } catch (const variants::VariantError& e) {
        return e.what();
    }
    return "no error";
}

ModelSpec gpt2Like() {
    ModelSpec model;
    model.architecture = Architecture::Gpt2;
    model.vocabSize = 64, model.hidden = 32, model.layers = 2, model.heads = 4, model.kvHeads = 4;
    model.headDim = 8, model.intermediate = 64, model.maxPositions = 32;
    model.causal = true, model.tieEmbeddings = true;
    return model;
}

VariantSpec withRule(WeightRule::Kind kind) {
    VariantSpec spec;
    spec.weightRule.kind = kind;
    return spec;
}
} // namespace

class TestAttentionRules : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsBothRules() {
        const VariantSpec sink = variants::parseVariantSpec(
            R"({"attention_rule": {"kind": "sink_softmax", "sink": 1.5}})");
        QCOMPARE(int(sink.weightRule.kind), int(WeightRule::Kind::SinkSoftmax));
        QCOMPARE(sink.weightRule.sink, 1.5f);
        QVERIFY(sink.needsComposedPath() && !sink.isVanilla());
        const VariantSpec offByOne =
            variants::parseVariantSpec(R"({"attention_rule": {"kind": "sink_softmax"}})");
        QCOMPARE(offByOne.weightRule.sink, 0.0f);
        const VariantSpec sigmoid =
            variants::parseVariantSpec(R"({"attention_rule": {"kind": "sigmoid"}})");
        QCOMPARE(int(sigmoid.weightRule.kind), int(WeightRule::Kind::Sigmoid));
        QVERIFY(!sigmoid.weightRule.bias.has_value());
        const VariantSpec biased =
            variants::parseVariantSpec(R"({"attention_rule": {"kind": "sigmoid", "bias": -3}})");
        QCOMPARE(biased.weightRule.bias.value_or(0.0f), -3.0f);
        QVERIFY(
            variants::parseVariantSpec(R"({"attention_rule": {"kind": "softmax"}})").isVanilla());
    }

    void refusesWhatIsWrong() {
        QCOMPARE(parseError(R"({"attention_rule": {}})"),
                 QString("variant spec: 'attention_rule.kind' is missing: give softmax, "
                         "sink_softmax or sigmoid"));
        QCOMPARE(parseError(R"({"attention_rule": {"kind": "relu"}})"),
                 QString("variant spec: 'attention_rule.kind' is 'relu'; known: softmax, "
                         "sink_softmax, sigmoid"));
        QCOMPARE(parseError(R"({"attention_rule": {"kind": "sigmoid", "sink": 1}})"),
                 QString("variant spec: 'attention_rule.sink' belongs to the sink_softmax rule"));
        QCOMPARE(parseError(R"({"attention_rule": {"kind": "sink_softmax", "bias": 1}})"),
                 QString("variant spec: 'attention_rule.bias' belongs to the sigmoid rule"));
        QCOMPARE(parseError(R"({"attention_rule": {"kind": "sigmoid", "bais": 1}})"),
                 QString("variant spec: unknown key 'attention_rule.bais'"));
    }

    // −ln n with n the keys of the pass (ml-sigmoid-attention's constant attn_bias = −ln(seq_len)).
    void sigmoidBiasIsMinusLogKeys() {
        const WeightRule rule = withRule(WeightRule::Kind::Sigmoid).weightRule;
        QCOMPARE(variants::sigmoidBias(rule, 16), -float(std::log(16.0)));
        QCOMPARE(variants::sigmoidBias(rule, 1), 0.0f);
        WeightRule given = rule;
        given.bias = -2.5f;
        QCOMPARE(variants::sigmoidBias(given, 16), -2.5f);
    }

    void aRequestedRuleMergesOverTheCheckpoint() {
        VariantSpec checkpoint;
        checkpoint.weightRule.kind = WeightRule::Kind::Sigmoid;
        const VariantSpec keep = variants::requestOverCheckpoint(checkpoint, VariantSpec{});
        QCOMPARE(int(keep.weightRule.kind), int(WeightRule::Kind::Sigmoid));
        const VariantSpec request = withRule(WeightRule::Kind::SinkSoftmax);
        const VariantSpec merged = variants::requestOverCheckpoint(checkpoint, request);
        QCOMPARE(int(merged.weightRule.kind), int(WeightRule::Kind::SinkSoftmax));
    }

    void runsOnTheComposedRoute() {
        for (const auto kind : {WeightRule::Kind::SinkSoftmax, WeightRule::Kind::Sigmoid}) {
            const variants::ForwardPlan plan = variants::planForward(withRule(kind), gpt2Like());
            QCOMPARE(int(plan.attention), int(variants::AttentionRoute::Composed));
        }
    }

    void refusesWhatCannotRunIt() {
        const ModelSpec model = gpt2Like();
        VariantSpec favor = withRule(WeightRule::Kind::Sigmoid);
        favor.kernel = variants::AttentionKernel::Favor;
        QCOMPARE(planError(favor, model),
                 QString("FAVOR+ attention never forms the score matrix that an attention rule "
                         "(sink softmax, sigmoid) acts on; use it with the softmax kernel"));
        VariantSpec span = withRule(WeightRule::Kind::SinkSoftmax);
        span.span.enabled = true;
        span.span.spans = {4.0f};
        QCOMPARE(planError(span, model),
                 QString("an adaptive span renormalises each row of weights to sum 1, which "
                         "undoes a sink softmax or sigmoid rule; use one or the other"));
        VariantSpec recurrence = withRule(WeightRule::Kind::Sigmoid);
        recurrence.recurrence = variants::Recurrence{4, 4, 0, 2};
        QCOMPARE(planError(recurrence, model),
                 QString("Transformer-XL recurrence runs plain softmax attention segment by "
                         "segment; it does not combine with an attention rule (sink softmax, "
                         "sigmoid)"));
        ModelSpec gemma = model;
        gemma.sandwichNorms = true;
        QVERIFY(planError(withRule(WeightRule::Kind::SinkSoftmax), gemma)
                    .startsWith("Gemma's sandwich norms"));
        QVERIFY(variants::atlasRefusal(withRule(WeightRule::Kind::Sigmoid))
                    .find("an attention rule other than softmax") != std::string::npos);
    }

    void refusesTheFunnel() {
        ModelSpec model = gpt2Like();
        model.architecture = Architecture::Headlight;
        model.causal = false;
        VariantSpec funnel = withRule(WeightRule::Kind::Sigmoid);
        funnel.block = variants::BlockSpec{};
        funnel.block->funnelBlocks = {1, 1};
        QCOMPARE(planError(funnel, model),
                 QString("funnel: the pooled stack runs softmax attention on rectangular maps; it "
                         "does not combine with an attention rule (sink softmax, sigmoid)"));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestAttentionRules)
#include "test_attention_rules.moc"
