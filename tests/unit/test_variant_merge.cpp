// How a zoo checkpoint's own settings and a requested variant merge (variants/variant_merge.h):
// with every field of VariantSpec set, each one reaches the merged spec from the side it should.
#include "variants/variant_merge.h"

#include <QTest>
#include <utility>
#include <vector>

using namespace headlight::variants;

namespace {

// A spec with every field away from its default; flavours 0 and 1 differ in every field that is
// not a flag (a flag has one value away from its default).
VariantSpec everyFieldSet(int flavour) {
    const bool first = flavour == 0;
    VariantSpec spec;
    spec.kernel = first ? AttentionKernel::Lsh : AttentionKernel::Favor;
    spec.features = first ? 7 : 9;
    spec.orthogonal = false;
    spec.lshBuckets = first ? 4 : 6;
    spec.lshRounds = first ? 3 : 2;
    spec.lshChunk = first ? 5 : 7;
    spec.sharedQk = false;
    spec.probSparseFactor = first ? 2.5f : 3.5f;
    spec.projected = first ? 9 : 11;
    spec.landmarks = first ? 3 : 5;
    spec.pinvIterations = first ? 2 : 4;
    spec.seed = first ? 11 : 13;
    MaskPart band;
    band.window = first ? 2 : 3;
    spec.mask = SparseMask{first ? "longformer" : "", {band}, uint64_t(first ? 3 : 5)};
    spec.prior = {first ? Prior::Kind::Gaussian : Prior::Kind::Share, first ? 3 : 4,
                  first ? 2.0f : 6.0f};
    spec.span = {true, {first ? 4.0f : 5.0f}, first ? 16.0f : 8.0f};
    spec.talkingHeads = {
        true, {1, 0, 0, 1}, first ? std::vector<float>{} : std::vector<float>{0, 1, 1, 0}};
    spec.weightRule = {first ? WeightRule::Kind::SinkSoftmax : WeightRule::Kind::Sigmoid,
                       first ? 1.5f : 0.0f, first ? std::nullopt : std::optional<float>(-2.0f)};
    spec.position = first ? PositionKind::Alibi : PositionKind::Sinusoidal;
    spec.dropFfn = true;
    spec.earlyExit = {first ? EarlyExit::Criterion::Saturation : EarlyExit::Criterion::Patience,
                      first ? 0.9f : 0.5f, first ? 3 : 4};
    spec.recurrence = Recurrence{4, first ? 8 : 12, 0, 2};
    spec.knn = KnnLm{first ? "corpus.txt" : "other.txt", first ? 4 : 6, 0.5f, 2.0f};
    BlockSpec block;
    block.norm = first ? BlockSpec::Norm::Rms : BlockSpec::Norm::Scale;
    spec.block = block;
    return spec;
}

// The positions (in declaration order) of the fields where two specs differ.
std::vector<std::size_t> differingFields(const VariantSpec& a, const VariantSpec& b) {
    const auto left = variantFields(a);
    const auto right = variantFields(b);
    std::vector<std::size_t> differing;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((std::get<I>(left).value == std::get<I>(right).value ? void() : differing.push_back(I)),
         ...);
    }
    (std::make_index_sequence<std::tuple_size_v<decltype(left)>>{});
    return differing;
}

QByteArray listed(const std::vector<std::size_t>& fields) {
    QByteArray text = "fields (declaration order):";
    for (std::size_t field : fields)
        text += " " + QByteArray::number(qulonglong(field));
    return text;
}
} // namespace

class TestVariantMerge : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixturesSetEveryField() {
        const std::size_t count =
            std::tuple_size_v<decltype(variantFields(std::declval<VariantSpec&>()))>;
        for (int flavour : {0, 1})
            QCOMPARE(differingFields(everyFieldSet(flavour), VariantSpec{}).size(), count);
        QCOMPARE(differingFields(everyFieldSet(0), everyFieldSet(1)).size(), count - 3);
    }

    void everyRequestedFieldSurvivesOverAVanillaCheckpoint() {
        const VariantSpec request = everyFieldSet(1);
        VariantSpec expected = request;
        expected.block.reset(); // the checkpoint's wiring is never replaced
        const auto wrong = differingFields(requestOverCheckpoint(VariantSpec{}, request), expected);
        QVERIFY2(wrong.empty(), listed(wrong).constData());
    }

    void everyRequestedFieldSurvives() {
        const VariantSpec checkpoint = everyFieldSet(0), request = everyFieldSet(1);
        VariantSpec expected = request;
        expected.block = checkpoint.block; // the checkpoint's wiring is never replaced
        const VariantSpec merged = requestOverCheckpoint(checkpoint, request);
        const auto wrong = differingFields(merged, expected);
        QVERIFY2(wrong.empty(), listed(wrong).constData());
    }

    void everyCheckpointFieldSurvivesAnEmptyRequest() {
        const VariantSpec checkpoint = everyFieldSet(0);
        const auto wrong =
            differingFields(requestOverCheckpoint(checkpoint, VariantSpec{}), checkpoint);
        QVERIFY2(wrong.empty(), listed(wrong).constData());
    }

    void eachRequestedOptionOverridesOnlyItself() {
        const VariantSpec checkpoint = everyFieldSet(0);
        VariantSpec request;
        request.position = PositionKind::None;
        VariantSpec expected = checkpoint;
        expected.position = PositionKind::None;
        QVERIFY(requestOverCheckpoint(checkpoint, request) == expected);
    }

    void aRequestedKernelBringsItsOwnSettings() {
        VariantSpec checkpoint;
        checkpoint.kernel = AttentionKernel::Lsh;
        checkpoint.lshBuckets = 6;
        checkpoint.seed = 1;
        VariantSpec request;
        request.kernel = AttentionKernel::Favor;
        request.features = 16;
        const VariantSpec merged = requestOverCheckpoint(checkpoint, request);
        QCOMPARE(merged.kernel, AttentionKernel::Favor);
        QCOMPARE(merged.features, 16);
        QCOMPARE(merged.lshBuckets, VariantSpec{}.lshBuckets);
        QCOMPARE(merged.seed, uint64_t(0));

        // Without a kernel, the request's kernel settings do not detach the checkpoint's kernel
        // from its own.
        VariantSpec settingsOnly;
        settingsOnly.seed = 3;
        settingsOnly.lshBuckets = 2;
        QVERIFY(requestOverCheckpoint(checkpoint, settingsOnly) == checkpoint);
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestVariantMerge)
#include "test_variant_merge.moc"
