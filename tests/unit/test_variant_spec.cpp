// The variant spec's JSON: what each key selects, and the one-line refusals for what is wrong.
#include <QTest>
#include <set>

#include "variants/catalogue.h"
#include "variants/variant_spec.h"

using namespace headlight::variants;

namespace {
QString errorOf(const char* json) {
    try {
        parseVariantSpec(json);
    } catch (const VariantError& e) {
        return e.what();
    }
    return "no error";
}
} // namespace

class TestVariantSpec : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void emptySpecIsVanilla() {
        const VariantSpec spec = parseVariantSpec("{}");
        QVERIFY(spec.isVanilla());
        QVERIFY(!spec.needsComposedPath());
    }

    void readsEveryFamily() {
        const VariantSpec spec = parseVariantSpec(R"({
            "attention": {"kernel": "favor", "features": 128, "orthogonal": false},
            "seed": 9,
            "mask": {"preset": "longformer", "window": 3, "global": [0, -1]},
            "prior": {"kind": "residual"},
            "span": {"z": [4, 8], "ramp": 2},
            "talking_heads": {"logits": [[1, 0], [0, 1]]},
            "position": "alibi",
            "drop_ffn": true,
            "early_exit": {"criterion": "patience", "patience": 3}})");
        QCOMPARE(int(spec.kernel), int(AttentionKernel::Favor));
        QCOMPARE(spec.features, 128);
        QVERIFY(!spec.orthogonal);
        QCOMPARE(spec.seed, uint64_t(9));
        QVERIFY(spec.mask.has_value());
        QCOMPARE(spec.mask->preset, std::string("longformer"));
        QCOMPARE(spec.mask->parts.size(), std::size_t(2));
        QCOMPARE(spec.mask->parts[0].window, 3);
        QCOMPARE(spec.mask->parts[1].tokens, (std::vector<int>{0, -1}));
        QCOMPARE(int(spec.prior.kind), int(Prior::Kind::Residual));
        QCOMPARE(spec.span.spans, (std::vector<float>{4, 8}));
        QCOMPARE(spec.span.ramp, 2.0f);
        QCOMPARE(spec.talkingHeads.logitsMix, (std::vector<float>{1, 0, 0, 1}));
        QVERIFY(spec.talkingHeads.weightsMix.empty());
        QCOMPARE(int(spec.position), int(PositionKind::Alibi));
        QVERIFY(spec.dropFfn);
        QCOMPARE(int(spec.earlyExit.criterion), int(EarlyExit::Criterion::Patience));
        QCOMPARE(spec.earlyExit.patience, 3);
        QVERIFY(!spec.isVanilla());
    }

    void readsRecurrence() {
        const VariantSpec spec =
            parseVariantSpec(R"({"recurrence": {"segment": 16, "memory": 32, "compressed": 8, "rate": 4}})");
        QVERIFY(spec.recurrence && !spec.isVanilla());
        QCOMPARE(spec.recurrence->segment, 16);
        QCOMPARE(spec.recurrence->memory, 32);
        QCOMPARE(spec.recurrence->compressed, 8);
        QCOMPARE(spec.recurrence->rate, 4);
        QCOMPARE(int(parseVariantSpec(R"({"position": "xl"})").position), int(PositionKind::Xl));
    }

    void handMadeMaskParts() {
        const VariantSpec spec = parseVariantSpec(
            R"({"mask": {"parts": [{"kind": "random", "count": 2}, {"kind": "band", "windows": [1, 4]}], "seed": 3}})");
        QCOMPARE(spec.mask->parts.size(), std::size_t(2));
        QCOMPARE(int(spec.mask->parts[0].kind), int(MaskPart::Kind::Random));
        QCOMPARE(spec.mask->parts[0].count, 2);
        QCOMPARE(spec.mask->parts[1].windows, (std::vector<int>{1, 4}));
        QCOMPARE(spec.mask->seed, uint64_t(3));
    }

    void refusesWithTheOffendingKey_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("syntax") << "{" << "variant spec: invalid JSON at byte 1";
        QTest::newRow("not an object") << "[]" << "variant spec: the top level must be an object";
        QTest::newRow("unknown key") << R"({"atention": {}})" << "variant spec: unknown key 'atention'";
        QTest::newRow("nested unknown key") << R"({"prior": {"kind": "share", "evry": 2}})"
                                            << "variant spec: unknown key 'prior.evry'";
        QTest::newRow("unknown kernel") << R"({"attention": {"kernel": "flash"}})"
                                        << "variant spec: 'attention.kernel' is 'flash'; known: softmax, lsh";
        QTest::newRow("odd buckets") << R"({"attention": {"kernel": "lsh", "buckets": 7}})"
                                     << "variant spec: 'attention.buckets' must be even";
        QTest::newRow("negative window") << R"({"mask": {"preset": "longformer", "window": -1}})"
                                         << "variant spec: 'mask.window' must be an integer from 0";
        QTest::newRow("fractional") << R"({"attention": {"features": 1.5}})"
                                    << "variant spec: 'attention.features' must be an integer from 1";
        QTest::newRow("preset and parts") << R"({"mask": {"preset": "star", "parts": []}})"
                                          << "variant spec: 'mask.preset' cannot be combined with 'parts'";
        QTest::newRow("no preset") << R"({"mask": {}})" << "variant spec: 'mask.preset' is missing";
        QTest::newRow("bad part") << R"({"mask": {"parts": [3]}})" << "variant spec: 'mask.parts[0]' must be an object";
        QTest::newRow("span without z") << R"({"span": {}})" << "variant spec: 'span.z' is missing";
        QTest::newRow("ragged mix") << R"({"talking_heads": {"weights": [[1, 0], [0]]}})"
                                    << "variant spec: 'talking_heads.weights' must be a square list of rows";
        QTest::newRow("wrong type") << R"({"drop_ffn": "yes"})" << "variant spec: 'drop_ffn' must be true or false";
        QTest::newRow("recurrence without segment") << R"({"recurrence": {"memory": 8}})"
                                                    << "variant spec: 'recurrence.segment' is missing";
        QTest::newRow("memory not whole segments") << R"({"recurrence": {"segment": 4, "memory": 6}})"
                                                   << "variant spec: 'recurrence.memory' must be a multiple of segment";
        QTest::newRow("rate not dividing segment")
            << R"({"recurrence": {"segment": 4, "memory": 4, "compressed": 2, "rate": 3}})"
            << "variant spec: 'recurrence.rate' must divide segment";
        QTest::newRow("funnel without blocks") << R"({"funnel": {"stride": 2}})"
                                               << "variant spec: 'funnel.blocks' is missing";
        QTest::newRow("empty funnel block")
            << R"({"funnel": {"blocks": [2, 0]}})"
            << "variant spec: 'funnel.blocks' must hold integers from 1";
        QTest::newRow("funnel stride 1")
            << R"({"funnel": {"blocks": [2, 2], "stride": 1}})"
            << "variant spec: 'funnel.stride' must be an integer from 2";
        QTest::newRow("unknown position") << R"({"position": "xpos"})"
                                          << "variant spec: 'position' is 'xpos'; known: checkpoint, none";
    }
    void refusesWithTheOffendingKey() {
        QFETCH(QString, json);
        QFETCH(QString, message);
        const QString error = errorOf(json.toUtf8().constData());
        QVERIFY2(error.startsWith(message), qPrintable(error));
        QVERIFY(!error.contains('\n'));
    }

    void catalogueCoversTheImplementedItems() {
        std::set<int> items;
        for (const CatalogueEntry& e : catalogue()) {
            items.insert(e.item);
            // Every listed usage parses, so the list never advertises what the engine refuses.
            QVERIFY2(errorOf(e.usage) == "no error", e.usage);
        }
        for (int item : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}) QVERIFY2(items.count(item), qPrintable(QString::number(item)));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestVariantSpec)
#include "test_variant_spec.moc"
