// Head ablation and activation patching (variants/intervention.h,
// app/session/activation_patching.h) on each backend against PyTorch hooks on an independent
// torch.nn GPT-2 and Qwen2 (tools/golden/make_intervention_goldens.py): the ablated logits (zero,
// mean, mean-corpus with its head means, replace from a source text) and both patching grids
// within 1e-4; an ablation on the composed attention route; the plan's one-line refusals;
// progress and cancel of a patching run and of the corpus means.
#include "ablation_effect.h"
#include "activation_patching.h"
#include "backend_fixture.h"
#include "golden.h"
#include "golden_json.h"
#include "io/safetensors.h"
#include "model/transformer.h"

#include <QJsonArray>
#include <QTest>

using namespace headlight;

namespace {

QJsonArray interventionCases() {
    return test::readJsonObject(
               QStringLiteral(HEADLIGHT_TEST_DATA "/interventions/golden.json"))["cases"]
        .toArray();
}

using test::idsOf;

std::string modelFolder(const QJsonObject& c) {
    return (test::goldenRoot() + "/" + c["model"].toString()).toStdString();
}

io::SafetensorsFile expectedOf(const QJsonObject& c) {
    return io::SafetensorsFile((QStringLiteral(HEADLIGHT_TEST_DATA "/interventions/golden/") +
                                c["name"].toString() + ".safetensors")
                                   .toStdString());
}

// A golden case's corpus (lists of ids) as the texts of a checkpoint without a tokenizer.
QStringList corpusTexts(const QJsonValue& corpus) {
    QStringList texts;
    for (const QJsonValue& ids : corpus.toArray())
        texts << test::joinedIds(ids, ' ');
    return texts;
}

Tensor tensorOf(const std::vector<double>& values, std::vector<int64_t> shape) {
    return Tensor(std::move(shape), std::vector<float>(values.begin(), values.end()));
}

std::string refusalOf(const TransformerModel& model, const ModelInput& input,
                      const variants::Intervention& intervention,
                      const variants::VariantSpec& variant = {}) {
    try {
        model.forward(input, {}, variant, intervention);
    } catch (const variants::VariantError& error) {
        return error.what();
    }
    return "(no error)";
}
} // namespace

class TestInterventions : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;

public:
    explicit TestInterventions(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void matchesPyTorchHooks_data() {
        QTest::addColumn<int>("index");
        const QJsonArray cases = interventionCases();
        QVERIFY2(cases.size() == 12, "expected tools/golden/make_intervention_goldens.py's cases");
        for (int i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].toObject()["name"].toString())) << i;
    }

    void matchesPyTorchHooks() {
        QFETCH(int, index);
        const QJsonObject c = interventionCases()[index].toObject();
        const auto model = loadModel(modelFolder(c), fixture_.backend());
        const io::SafetensorsFile expected = expectedOf(c);
        QString where;
        if (c["kind"].toString() == "ablation") {
            std::vector<variants::HeadAblationSpec> specs;
            for (const QJsonValue& h : c["heads"].toArray())
                specs.push_back(
                    {h["layer"].toInt(), h["head"].toInt(),
                     *variants::ablationModeFromName(h["mode"].toString().toStdString())});
            const ModelInput source{idsOf(c["source_ids"]), {}, {}};
            std::optional<app::CorpusHeadMeans> means;
            if (c.contains("corpus")) {
                means = app::corpusHeadMeans(*model, nullptr, {}, corpusTexts(c["corpus"]));
                QVERIFY(means);
                QCOMPARE(means->texts, 3);
                QCOMPARE(means->positions, int64_t(21));
                QVERIFY2(test::maxAbsDiff(means->means, expected.loadF32("head_means"), &where) <=
                             test::goldenTolerance(c["model"].toString()),
                         qPrintable("corpus head means " + where));
            }
            const ModelInput input{idsOf(c["ids"]), {}, {}};
            const app::AblationEffect effect = app::runAblation(
                *model, input, {},
                app::resolveAblations(*model, {}, specs,
                                      c.contains("source_ids") ? &source : nullptr,
                                      int64_t(input.ids.size()), means ? &*means : nullptr));
            QVERIFY2(test::maxAbsDiff(effect.ablatedLogits, expected.loadF32("ablated_logits"),
                                      &where) <= test::goldenTolerance(c["model"].toString()),
                     qPrintable("ablated logits " + where));
            QVERIFY2(test::maxAbsDiff(effect.cleanLogits, expected.loadF32("clean_logits"),
                                      &where) <= test::goldenTolerance(c["model"].toString()),
                     qPrintable("clean logits " + where));
            double kl = 0.0;
            for (const app::PositionChange& change : effect.positions)
                kl += change.kl;
            QVERIFY2(kl > 1e-4, "the ablation changed nothing");
            return;
        }
        app::PatchSetup setup;
        setup.clean.ids = idsOf(c["clean_ids"]);
        setup.corrupt.ids = idsOf(c["corrupt_ids"]);
        setup.target = c["target"].toInt();
        setup.grid = c["grid"].toString() == "layers_heads" ? app::PatchGrid::LayersByHeads
                                                            : app::PatchGrid::LayersByPositions;
        const std::optional<app::PatchResult> result = app::runPatching(*model, setup, {});
        QVERIFY(result);
        QCOMPARE(result->foil, c["foil"].toInt()); // the corrupted run's top prediction
        QVERIFY(std::abs(result->cleanDifference - c["clean_difference"].toDouble()) <= 1e-4);
        QVERIFY(std::abs(result->corruptDifference - c["corrupt_difference"].toDouble()) <= 1e-4);
        const std::vector<int64_t> shape{result->rows, result->cols};
        QVERIFY2(test::maxAbsDiff(tensorOf(result->difference, shape),
                                  expected.loadF32("difference"),
                                  &where) <= test::goldenTolerance(c["model"].toString()),
                 qPrintable("logit difference " + where));
        QVERIFY2(test::maxAbsDiff(tensorOf(result->recovered, shape), expected.loadF32("recovered"),
                                  &where) <= test::goldenTolerance(c["model"].toString()),
                 qPrintable("recovered " + where));
    }

    // On the composed route (a sparse mask): a head replaced by its own output changes nothing,
    // a zeroed head changes the output, and mean over a one-token text is the head itself.
    void ablatesOnTheComposedRoute() {
        const auto model =
            loadModel((test::goldenRoot() + "/gpt2").toStdString(), fixture_.backend());
        const variants::VariantSpec banded =
            variants::parseVariantSpec(R"({"mask": {"parts": [{"kind": "band", "window": 2}]}})");
        const ModelInput input{{489, 11, 659, 0, 399, 484}, {}, {}};
        CaptureRequest capture;
        capture.logits = true;
        capture.headOutputs = true;
        const Trace clean = model->forward(input, capture, banded);
        const Tensor& outputs = clean.layers[1].headOutputs;
        QCOMPARE(outputs.shape(), (std::vector<int64_t>{4, 6, 8}));
        const int64_t size = 6 * 8;
        const Tensor head2(
            {6, 8}, std::vector<float>(outputs.data() + 2 * size, outputs.data() + 3 * size));
        variants::Intervention same;
        same.heads.push_back({{1, 2, variants::AblationMode::Replace}, head2});
        QVERIFY(test::maxAbsDiff(model->forward(input, capture, banded, same).logits,
                                 clean.logits) <= 1e-6);
        const Tensor zeroed =
            model->forward(input, capture, banded, variants::interventionOf({{1, 2}})).logits;
        QVERIFY(test::differsBy(zeroed, clean.logits, 1e-3));
        const Trace zeroTrace =
            model->forward(input, capture, banded, variants::interventionOf({{1, 2}}));
        const Tensor& ablatedOutputs = zeroTrace.layers[1].headOutputs;
        for (int64_t i = 2 * size; i < 3 * size; ++i)
            QCOMPARE(ablatedOutputs.data()[i], 0.0f);
        const ModelInput one{{489}, {}, {}};
        QVERIFY(test::maxAbsDiff(
                    model
                        ->forward(one, capture, banded,
                                  variants::interventionOf({{0, 1, variants::AblationMode::Mean}}))
                        .logits,
                    model->forward(one, capture, banded).logits) <= 1e-6);
    }

    void refusesWithOneLine() {
        const auto model =
            loadModel((test::goldenRoot() + "/gpt2").toStdString(), fixture_.backend());
        const ModelInput input{{489, 11, 659}, {}, {}};
        QCOMPARE(refusalOf(*model, input, variants::interventionOf({{2, 0}})),
                 std::string("head 2.0: layer 2 does not exist (the model has 2)"));
        QCOMPARE(refusalOf(*model, input, variants::interventionOf({{1, 4}})),
                 std::string("head 1.4: head 4 does not exist (the model has 4 per layer)"));
        variants::Intervention shortSource;
        shortSource.heads.push_back({{0, 1, variants::AblationMode::Replace}, Tensor({2, 8})});
        QCOMPARE(refusalOf(*model, input, shortSource),
                 std::string("head 0.1: the replacement output is [2, 8], the text needs [3, 8] "
                             "(a source text of the same length)"));
        const variants::VariantSpec segments =
            variants::parseVariantSpec(R"({"recurrence": {"segment": 2, "memory": 2}})");
        QCOMPARE(refusalOf(*model, input, variants::interventionOf({{0, 0}}), segments),
                 std::string("segment recurrence runs each layer once per segment, so its heads "
                             "have no single output over the text to ablate or patch"));
        variants::Intervention badRow;
        badRow.residuals.push_back({1, 3, Tensor({32})});
        QCOMPARE(refusalOf(*model, input, badRow),
                 std::string("residual patch at layer 1, position 3: the text has 3 tokens"));

        app::PatchSetup setup;
        setup.clean.ids = {489, 11, 659};
        setup.corrupt.ids = {489, 11};
        try {
            app::runPatching(*model, setup, {});
            QFAIL("texts of different lengths were patched");
        } catch (const ModelError& error) {
            QCOMPARE(std::string(error.what()),
                     std::string("the clean text has 3 tokens and the corrupted text 2; patching "
                                 "needs the same length"));
        }
        const auto bert =
            loadModel((test::goldenRoot() + "/bert").toStdString(), fixture_.backend());
        try {
            app::runAblation(*bert, {{2, 10, 11, 3}, {}, {}}, {},
                             variants::interventionOf({{0, 0}}));
            QFAIL("an encoder without an LM head gave an output change");
        } catch (const ModelError& error) {
            QCOMPARE(std::string(error.what()), std::string(app::noLanguageModelHeadReason()));
        }
    }

    // mean-corpus without a corpus, or with another model's means, and a mean of the wrong
    // size each get one line; the corpus run reports each text and stops when told.
    void corpusMeansRefuseAndCancel() {
        const auto model =
            loadModel((test::goldenRoot() + "/gpt2").toStdString(), fixture_.backend());
        const std::vector<variants::HeadAblationSpec> specs{
            {0, 1, variants::AblationMode::CorpusMean}};
        const auto refusal = [&](const app::CorpusHeadMeans* means) -> std::string {
            try {
                app::resolveAblations(*model, {}, specs, nullptr, 3, means);
            } catch (const variants::VariantError& error) {
                return error.what();
            }
            return "(no error)";
        };
        QCOMPARE(refusal(nullptr), std::string("mean-corpus ablations need a corpus of texts"));
        app::CorpusHeadMeans other{{}, Tensor({3, 4, 8}), 1, 1};
        QCOMPARE(refusal(&other), std::string("the corpus means were computed for another model"));
        variants::Intervention wrongSize;
        wrongSize.heads.push_back({specs.front(), Tensor({7})});
        QCOMPARE(refusalOf(*model, {{489, 11, 659}, {}, {}}, wrongSize),
                 std::string("head 0.1: the corpus mean has 7 values, the head's output 8"));
        std::vector<std::pair<int, int>> calls;
        const auto stopped = app::corpusHeadMeans(*model, nullptr, {}, {"1 2 3", "4 5", "6 7 8 9"},
                                                  [&](int done, int total) {
                                                      calls.emplace_back(done, total);
                                                      return done < 2;
                                                  });
        QVERIFY(!stopped);
        QCOMPARE(calls, (std::vector<std::pair<int, int>>{{1, 3}, {2, 3}}));
        try {
            app::corpusHeadMeans(*model, nullptr, {}, {"1 2", "3 x"});
            QFAIL("a text that is not ids was averaged");
        } catch (const std::invalid_argument& error) {
            QVERIFY2(QString(error.what()).startsWith("corpus text 2: "), error.what());
        }
    }

    void patchingReportsProgressAndCancels() {
        const auto model =
            loadModel((test::goldenRoot() + "/gpt2").toStdString(), fixture_.backend());
        app::PatchSetup setup;
        setup.clean.ids = {489, 11, 659, 0};
        setup.corrupt.ids = {489, 30, 659, 0};
        setup.target = 404;
        setup.grid = app::PatchGrid::LayersByHeads;
        std::vector<std::pair<int, int>> calls;
        const auto result = app::runPatching(*model, setup, [&](int done, int total) {
            calls.emplace_back(done, total);
            return done < 3;
        });
        QVERIFY(!result);
        QCOMPARE(calls, (std::vector<std::pair<int, int>>{{1, 8}, {2, 8}, {3, 8}}));
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestInterventions)
#include "test_interventions.moc"
