// The kNN-LM view's numbers (app/session/knn_readout.h) on the tiny GPT-2 with the datastore of
// tests/data/knn: the λ re-mix of a pass equals a pass run at that λ (within 1e-6); p_kNN summed
// from the stored neighbours equals exp(−d/τ) normalised here from the distances; the per-text
// loss equals −ln softmax(logits)[next] from the pass's own logits; each neighbour's datastore
// position names the text token its stored next token came from (across chunk boundaries); and
// a build whose progress asks to stop throws DatastoreCancelled. On each backend.
#include "backend_fixture.h"
#include "error_of.h"
#include "golden.h"
#include "knn_readout.h"
#include "temp_files.h"
#include "tokenize/tokenizer.h"

#include <QTest>
#include <algorithm>
#include <cmath>

using namespace headlight;

namespace {
const QString kKnnViewData = QStringLiteral(HEADLIGHT_TEST_DATA "/knn");
const char* const kKnnViewQuery =
    "The keeper counted the steps and lit the lamp at dusk, and the ships sailed north.";

variants::VariantSpec knnSpec(double lambda) {
    variants::VariantSpec spec;
    spec.knn =
        variants::KnnLm{(kKnnViewData + "/datastore.txt").toStdString(), 4, float(lambda), 2.0f};
    return spec;
}

float internalAt(const app::ForwardResult& r, const char* name, int64_t i) {
    return r.internals.at(name).values()[std::size_t(i)];
}
} // namespace

class TestKnnReadout : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;
    std::unique_ptr<TransformerModel> gpt2_;
    std::unique_ptr<tokenize::Tokenizer> tokenizer_;
    std::shared_ptr<const app::KnnStore> store_;
    std::vector<int32_t> query_;

    // A pass as the window's runner makes it, through the datastore, with its logits kept.
    app::ForwardResult run(double lambda, Tensor* logits = nullptr) const {
        CaptureRequest capture;
        capture.internals = true;
        capture.logits = logits != nullptr;
        const variants::VariantSpec spec = knnSpec(lambda);
        Trace trace =
            variants::forwardKnn(*gpt2_, {query_, {}, {}}, capture, spec, store_->datastore);
        app::ForwardResult result;
        result.variant = spec;
        result.internals = std::move(trace.internals);
        result.valid = trace.valid;
        for (std::size_t t = 0; t < query_.size(); ++t)
            result.tokens << QString::number(query_[t]);
        result.knnStore = store_;
        if (logits) *logits = std::move(trace.logits);
        return result;
    }

public:
    explicit TestKnnReadout(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() {
        fixture_.open();
        const std::string folder = (test::goldenRoot() + "/gpt2").toStdString();
        gpt2_ = loadModel(folder, fixture_.backend());
        tokenizer_ = tokenize::Tokenizer::load(folder);
        store_ = std::make_shared<const app::KnnStore>(app::readKnnStore(
            *gpt2_, tokenizer_.get(), knnSpec(0.25).knn->datastore, knnSpec(0.25)));
        const std::vector<int> ids = tokenizer_->encode(kKnnViewQuery, std::nullopt, false).ids;
        query_.assign(ids.begin(), ids.end());
    }

    void cleanupTestCase() {
        store_.reset();
        gpt2_.reset();
        fixture_.close();
    }

    void remixAtANewLambdaEqualsAPassAtThatLambda() {
        const app::ForwardResult stored = run(0.25);
        for (const double lambda : {0.0, 0.7, 1.0}) {
            const app::ForwardResult pass = run(lambda);
            const app::KnnMixture remix = app::remixKnn(stored, lambda);
            QCOMPARE(remix.positions.size(), query_.size());
            for (int64_t t = 0; t < int64_t(query_.size()); ++t) {
                const app::KnnPositionReadout& r = remix.positions[std::size_t(t)];
                // The last position scores the mixture's own guess, which moves with λ.
                if (!r.scored) continue;
                QCOMPARE(r.target, int32_t(internalAt(pass, "knn_target", t)));
                QVERIFY2(std::abs(r.pMix - internalAt(pass, "p_mix", t)) < 1e-6,
                         qPrintable(QString("λ %1, position %2").arg(lambda).arg(t)));
                QVERIFY(std::abs(r.pKnn - internalAt(pass, "p_knn", t)) < 1e-6);
                QVERIFY(std::abs(r.pLm - internalAt(pass, "p_lm", t)) < 1e-6);
            }
        }
        QCOMPARE(app::remixKnn(stored, -1.0).lambda, 0.25);
    }

    void pKnnIsTheKernelOfTheStoredDistances() {
        const app::ForwardResult result = run(0.25);
        const app::KnnMixture mixture = app::remixKnn(result, 0.5);
        const Tensor& distances = result.internals.at("knn_distances");
        const int64_t k = distances.dim(1);
        QCOMPARE(k, int64_t(4));
        double largest = 0.0;
        for (int64_t t = 0; t < distances.dim(0); ++t) {
            double total = 0.0, onTarget = 0.0;
            const double nearest = internalAt(result, "knn_distances", t * k);
            const int32_t target = mixture.positions[std::size_t(t)].target;
            for (int64_t i = 0; i < k; ++i) {
                const double d = internalAt(result, "knn_distances", t * k + i);
                QVERIFY(d >= nearest); // nearest first
                const double w = std::exp(-(d - nearest) / 2.0);
                total += w;
                if (int32_t(internalAt(result, "knn_next_token", t * k + i)) == target)
                    onTarget += w;
            }
            const double expected = onTarget / total;
            QVERIFY2(std::abs(mixture.positions[std::size_t(t)].pKnn - expected) < 1e-9,
                     qPrintable(QString("position %1").arg(t)));
            largest = std::max(largest, expected);
        }
        QVERIFY(largest > 0.0); // some position finds the scored token among its neighbours
    }

    void lossesAreTheMeanNegativeLogProbabilityOfTheNextToken() {
        Tensor logits;
        const app::ForwardResult result = run(0.25, &logits);
        const app::KnnMixture mixture = app::remixKnn(result, 0.25);
        const int64_t vocab = logits.dim(1), tokens = int64_t(query_.size());
        double lm = 0.0, mix = 0.0;
        for (int64_t t = 0; t + 1 < tokens; ++t) {
            const float* row = logits.data() + t * vocab;
            const double top = *std::max_element(row, row + vocab);
            double sum = 0.0;
            for (int64_t v = 0; v < vocab; ++v)
                sum += std::exp(double(row[v]) - top);
            const double pLm = std::exp(double(row[query_[std::size_t(t + 1)]]) - top) / sum;
            lm -= std::log(pLm);
            mix -= std::log(0.25 * mixture.positions[std::size_t(t)].pKnn + 0.75 * pLm);
        }
        QCOMPARE(mixture.scored, int(tokens - 1));
        QVERIFY2(std::abs(mixture.lmLoss - lm / double(tokens - 1)) < 1e-5,
                 qPrintable(QString::number(mixture.lmLoss)));
        QVERIFY(std::abs(mixture.mixLoss - mix / double(tokens - 1)) < 1e-5);
        QVERIFY(!mixture.positions.back().scored);
    }

    void neighboursNameTheirPlaceInTheDatastoreText() {
        const app::ForwardResult result = run(0.25);
        QVERIFY(store_->tokenCount() > 512); // more than one GPT-2 pass: rows cross a chunk edge
        QCOMPARE(store_->datastore.size(), store_->tokenCount() - 1);
        for (int64_t row = 0; row < store_->datastore.size(); ++row)
            QCOMPARE(store_->datastore.values[std::size_t(row)], store_->ids[std::size_t(row + 1)]);
        for (int t = 0; t < int(query_.size()); ++t)
            for (const app::KnnNeighbour& n : app::knnNeighbours(result, t)) {
                QCOMPARE(n.next, store_->ids[std::size_t(n.row + 1)]);
                const app::KnnContext context = app::knnContext(*store_, n.row, 5, 2);
                QCOMPARE(context.next, store_->label(n.row + 1));
                QVERIFY(context.before.size() <= 5 && context.after.size() <= 2);
                QCOMPARE(context.before.back(), store_->label(n.row));
                QVERIFY2(context.text.contains(
                             "[" +
                             store_->text(store_->offsets[std::size_t(n.row + 1)].first,
                                          store_->offsets[std::size_t(n.row + 1)].second) +
                             "]"),
                         qPrintable(context.text));
            }
        // Row 0's context is the text's first token: nothing before it.
        QCOMPARE(app::knnContext(*store_, 0, 5, 0).before, QStringList{store_->label(0)});
    }

    void aBuildStopsWhenItsProgressSaysSo() {
        std::vector<std::pair<int64_t, int64_t>> calls;
        const QString error = test::errorOf<variants::DatastoreCancelled>([&] {
            app::readKnnStore(*gpt2_, tokenizer_.get(), knnSpec(0.25).knn->datastore, knnSpec(0.25),
                              [&](int64_t done, int64_t total) {
                                  calls.emplace_back(done, total);
                                  return done < 1;
                              });
        });
        QCOMPARE(error, QString("kNN-LM: the datastore build was cancelled"));
        QCOMPARE(calls.size(), std::size_t(2));
        QCOMPARE(calls[0], std::make_pair(int64_t(0), int64_t(2)));
        QCOMPARE(calls[1], std::make_pair(int64_t(1), int64_t(2)));
        int last = -1;
        const app::KnnStore whole =
            app::readKnnStore(*gpt2_, tokenizer_.get(), knnSpec(0.25).knn->datastore, knnSpec(0.25),
                              [&](int64_t done, int64_t total) {
                                  last = int(done);
                                  return done <= total;
                              });
        QCOMPARE(last, 2);
        QCOMPARE(whole.datastore.size(), store_->datastore.size());
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestKnnReadout)
#include "test_knn_readout.moc"
