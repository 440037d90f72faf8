// Item 18, kNN-LM (Khandelwal et al. 2020) on the tiny GPT-2 with a datastore built from
// tests/data/knn/datastore.txt, checked against identities that hold whatever the weights:
// λ = 0 is the LM itself, a stored context finds itself at distance 0, p_kNN is a distribution,
// the neighbours are those of a brute-force search written here, and λ = 1, k = 1 predicts the
// nearest key's stored next token. The LM side is recomputed here from the checkpoint's own
// token embedding, not from the engine's logits. On each backend; the datastore and the mixed
// pass also match the CPU backend's (the keys within 1e-4, the LM head's logits too).
#include "backend_fixture.h"
#include "cli_runner.h"
#include "error_of.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/transformer.h"
#include "temp_files.h"
#include "tokenize/tokenizer.h"
#include "variants/knn_lm.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <numeric>

using namespace headlight;
using variants::KnnDatastore;
using variants::parseVariantSpec;

namespace {
const QString kData = QStringLiteral(HEADLIGHT_TEST_DATA "/knn");
const char* const kQuery =
    "The keeper counted the steps and lit the lamp at dusk, and the ships sailed north.";

float item(const Tensor& t, int64_t i) {
    return t.values()[std::size_t(i)];
}

float at(const Tensor& t, int64_t row, int64_t column) {
    return t.values()[std::size_t(row * t.dim(1) + column)];
}

// Every (distance, datastore row) pair of one query, nearest first, ties by row: the search by
// definition, in double.
std::vector<std::pair<double, int64_t>> bruteForce(const std::vector<std::vector<float>>& keys,
                                                   const float* query) {
    std::vector<std::pair<double, int64_t>> all;
    for (std::size_t j = 0; j < keys.size(); ++j) {
        double d = 0.0;
        for (std::size_t i = 0; i < keys[j].size(); ++i)
            d += std::pow(double(query[i]) - double(keys[j][i]), 2.0);
        all.emplace_back(d, int64_t(j));
    }
    std::sort(all.begin(), all.end());
    return all;
}

// Row t of hidden [T, D] through the tied head: the token embedding wte [V, D] transposed.
std::vector<double> tiedHead(const Tensor& hidden, const Tensor& wte, int64_t t) {
    std::vector<double> logits(static_cast<std::size_t>(wte.dim(0)), 0.0);
    for (int64_t v = 0; v < wte.dim(0); ++v)
        for (int64_t i = 0; i < wte.dim(1); ++i)
            logits[std::size_t(v)] += double(at(hidden, t, i)) * double(at(wte, v, i));
    return logits;
}

std::vector<double> softmax(const std::vector<double>& logits) {
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p;
    for (double l : logits)
        p.push_back(std::exp(l - top));
    const double sum = std::accumulate(p.begin(), p.end(), 0.0);
    for (double& x : p)
        x /= sum;
    return p;
}

QString variantError(const TransformerModel& model, const char* spec, const KnnDatastore& store) {
    return test::errorOf<variants::VariantError>([&] {
        variants::forwardKnn(model, {{40, 41, 42}, {}, {}}, {}, parseVariantSpec(spec), store);
    });
}
} // namespace

class TestKnnLm : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;
    std::unique_ptr<TransformerModel> gpt2_, bert_;
    std::vector<int32_t> text_, query_; // the datastore text and the query, in GPT-2's tokens
    std::vector<std::vector<int32_t>> chunks_;
    KnnDatastore store_;
    std::vector<std::vector<float>> keys_; // the final state of every stored position, found here

    std::vector<int32_t> tokens(const std::string& text) const {
        const auto tokenizer =
            tokenize::Tokenizer::load((test::goldenRoot() + "/gpt2").toStdString());
        const std::vector<int> ids = tokenizer->encode(text, std::nullopt, false).ids;
        return {ids.begin(), ids.end()};
    }

    Trace runKnn(const std::vector<int32_t>& ids, const char* spec, bool logits = false) const {
        CaptureRequest capture;
        capture.internals = true;
        capture.logits = logits;
        return variants::forwardKnn(*gpt2_, {ids, {}, {}}, capture, parseVariantSpec(spec), store_);
    }

public:
    explicit TestKnnLm(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() {
        fixture_.open();
        gpt2_ = loadModel((test::goldenRoot() + "/gpt2").toStdString(), fixture_.backend());
        bert_ = loadModel((test::goldenRoot() + "/bert").toStdString(), fixture_.backend());
        text_ = tokens(variants::readDatastoreText((kData + "/datastore.txt").toStdString()));
        query_ = tokens(kQuery);
        QVERIFY2(text_.size() > 512,
                 "the datastore text must span more than one GPT-2 pass of 512 tokens");
        chunks_ = variants::chunkForDatastore(text_, variants::datastoreChunkLength(gpt2_->spec()));
        store_ = variants::buildDatastore(*gpt2_, chunks_);
        for (const std::vector<int32_t>& chunk : chunks_) {
            const Tensor states = gpt2_->forward({chunk, {}, {}}).lastHiddenState;
            for (int64_t t = 0; t + 1 < int64_t(chunk.size()); ++t)
                keys_.emplace_back(states.data() + t * states.dim(1),
                                   states.data() + (t + 1) * states.dim(1));
        }
    }

    void cleanupTestCase() {
        gpt2_.reset();
        bert_.reset();
        fixture_.close();
    }

    void parsesTheKnnSection() {
        const variants::VariantSpec spec = parseVariantSpec(R"({"knn": {"datastore": "a.txt"}})");
        QVERIFY(spec.knn && !spec.isVanilla());
        QCOMPARE(spec.knn->datastore, std::string("a.txt"));
        QCOMPARE(spec.knn->k, 8);
        QCOMPARE(spec.knn->lambda, 0.25f);
        QCOMPARE(spec.knn->temperature, 1.0f);
        const auto error = [](const char* json) {
            return test::errorOf<variants::VariantError>([&] { parseVariantSpec(json); });
        };
        QCOMPARE(error(R"({"knn": {"datastore": "a.txt", "kk": 2}})"),
                 QString("variant spec: unknown key 'knn.kk'"));
        QVERIFY(error(R"({"knn": {}})").startsWith("variant spec: 'knn.datastore' is missing"));
        QVERIFY(error(R"({"knn": {"datastore": "a.txt", "lambda": 1.5}})")
                    .startsWith("variant spec: 'knn.lambda'"));
        QVERIFY(error(R"({"knn": {"datastore": "a.txt", "k": 0}})")
                    .startsWith("variant spec: 'knn.k'"));
        QVERIFY(error(R"({"knn": {"datastore": 3}})")
                    .startsWith("variant spec: 'knn.datastore' must be a string"));
    }

    void loadResolvesTheDatastoreNextToTheSpec() {
        const variants::VariantSpec spec =
            variants::loadVariantSpec((kData + "/spec.json").toStdString());
        QCOMPARE(QString::fromStdString(spec.knn->datastore),
                 QDir(kData).absoluteFilePath("datastore.txt"));
        QCOMPARE(spec.knn->k, 4);
    }

    void chunksHoldEveryPairOnce() {
        QCOMPARE(int(chunks_.size()), int((text_.size() - 1 + 510) / 511));
        for (std::size_t c = 0; c < chunks_.size(); ++c) {
            const std::size_t first = c * 511, last = std::min(text_.size(), first + 512);
            QVERIFY(chunks_[c] ==
                    std::vector<int32_t>(text_.begin() + long(first), text_.begin() + long(last)));
        }
        QVERIFY(store_.values == std::vector<int32_t>(text_.begin() + 1, text_.end()));
        QCOMPARE(store_.keys.shape(), (std::vector<int64_t>{int64_t(text_.size()) - 1, 32}));
    }

    void keysAreTheFinalStatesOfTheirChunk() {
        QCOMPARE(keys_.size(), std::size_t(store_.size()));
        for (std::size_t j = 0; j < keys_.size(); ++j)
            QVERIFY(std::equal(keys_[j].begin(), keys_[j].end(), store_.keys.data() + j * 32));
    }

    void refusedWithoutATiedCausalHead() {
        const QString error = variantError(*bert_, R"({"knn": {"datastore": "a.txt"}})", store_);
        QVERIFY2(error.startsWith("kNN-LM mixes in") && error.contains("bert"), qPrintable(error));
        QVERIFY(!error.contains('\n'));
        const QString plain = test::errorOf<variants::VariantError>([&] {
            gpt2_->forward({{40, 41}, {}, {}}, {},
                           parseVariantSpec(R"({"knn": {"datastore": "a.txt"}})"));
        });
        QVERIFY2(plain.contains("forwardKnn"), qPrintable(plain));
        QVERIFY(variantError(*gpt2_, R"({"knn": {"datastore": "a.txt", "k": 4000}})", store_)
                    .contains("holds only"));
    }

    void lambdaZeroIsTheLm() {
        const Trace knn = runKnn(query_, R"({"knn": {"datastore": "a.txt", "lambda": 0}})", true);
        const Trace vanilla = gpt2_->forward({query_, {}, {}});
        QVERIFY(test::maxAbsDiff(knn.lastHiddenState, vanilla.lastHiddenState) == 0.0);
        const Tensor wte = io::Checkpoint((test::goldenRoot() + "/gpt2").toStdString())
                               .loadF32("transformer.wte.weight");
        QCOMPARE(knn.logits.shape(), (std::vector<int64_t>{int64_t(query_.size()), wte.dim(0)}));
        for (int64_t t = 0; t < int64_t(query_.size()); ++t) {
            const std::vector<double> logits = tiedHead(vanilla.lastHiddenState, wte, t);
            for (std::size_t v = 0; v < logits.size(); ++v)
                QVERIFY(std::abs(at(knn.logits, t, int64_t(v)) - logits[v]) < 1e-4);
            const std::vector<double> p = softmax(logits);
            const auto argmax = int32_t(std::max_element(p.begin(), p.end()) - p.begin());
            const int32_t target =
                t + 1 < int64_t(query_.size()) ? query_[std::size_t(t + 1)] : argmax;
            QCOMPARE(item(knn.internals.at("knn_target"), t), float(target));
            QVERIFY(std::abs(item(knn.internals.at("p_lm"), t) - p[std::size_t(target)]) < 1e-6);
            QCOMPARE(item(knn.internals.at("p_mix"), t), item(knn.internals.at("p_lm"), t));
            QCOMPARE(item(knn.internals.at("mix_top"), t), float(argmax));
        }
    }

    void aStoredContextFindsItselfFirst() {
        const std::vector<int32_t>& chunk = chunks_.front();
        const Trace trace = runKnn(chunk, R"({"knn": {"datastore": "a.txt", "k": 3}})");
        const Tensor& index = trace.internals.at("knn_neighbors");
        const Tensor& distance = trace.internals.at("knn_distances");
        QCOMPARE(index.shape(), (std::vector<int64_t>{int64_t(chunk.size()), 3}));
        for (int64_t t = 0; t + 1 < int64_t(chunk.size()); ++t) {
            QCOMPARE(at(index, t, 0), float(t));
            QCOMPARE(at(distance, t, 0), 0.0f);
            QVERIFY(at(distance, t, 1) >= 0.0f);
        }
    }

    void knnDistributionSumsToOne() {
        const Trace trace = gpt2_->forward({query_, {}, {}});
        const variants::Neighbours neighbours =
            variants::nearestNeighbours(store_, trace.lastHiddenState, 8);
        for (float temperature : {0.1f, 1.0f, 100.0f})
            for (int64_t t = 0; t < neighbours.queries; ++t) {
                const std::vector<double> p =
                    variants::knnDistribution(store_, neighbours, t, 668, temperature);
                QVERIFY(std::abs(std::accumulate(p.begin(), p.end(), 0.0) - 1.0) < 1e-12);
                for (std::size_t y = 0; y < p.size(); ++y) {
                    bool stored = false;
                    for (int i = 0; i < 8; ++i)
                        stored |=
                            store_.values[std::size_t(neighbours.index[std::size_t(t * 8 + i)])] ==
                            int32_t(y);
                    QVERIFY(p[y] >= 0.0 && (stored || p[y] == 0.0));
                }
            }
    }

    void neighboursAreTheBruteForceOnes() {
        const Trace trace = runKnn(query_, R"({"knn": {"datastore": "a.txt", "k": 8}})");
        const Tensor& index = trace.internals.at("knn_neighbors");
        const Tensor& distance = trace.internals.at("knn_distances");
        const Tensor& next = trace.internals.at("knn_next_token");
        for (int64_t t = 0; t < int64_t(query_.size()); ++t) {
            const auto expected = bruteForce(keys_, trace.lastHiddenState.data() + t * 32);
            for (int i = 0; i < 8; ++i) {
                const auto& [d, row] = expected[std::size_t(i)];
                QCOMPARE(at(index, t, i), float(row));
                QVERIFY(std::abs(at(distance, t, i) - d) <= 1e-6 * std::max(d, 1.0));
                QCOMPARE(at(next, t, i), float(text_[std::size_t(row + 1)]));
            }
        }
    }

    void lambdaOneWithOneNeighbourPredictsItsNextToken() {
        const Trace trace =
            runKnn(query_, R"({"knn": {"datastore": "a.txt", "k": 1, "lambda": 1}})");
        for (int64_t t = 0; t < int64_t(query_.size()); ++t) {
            const int64_t nearest =
                bruteForce(keys_, trace.lastHiddenState.data() + t * 32).front().second;
            const float stored = float(text_[std::size_t(nearest + 1)]);
            QCOMPARE(item(trace.internals.at("mix_top"), t), stored);
            QCOMPARE(item(trace.internals.at("knn_top"), t), stored);
            QCOMPARE(item(trace.internals.at("p_mix"), t), item(trace.internals.at("p_knn"), t));
        }
    }

    void inspectRunsAKnnSpec() {
        test::ScratchDir scratch;
        const QString dump = scratch.freshPath();
        const test::CliResult result = test::runHeadlight(
            {"inspect", "--model", test::goldenRoot() + "/gpt2", "--text", kQuery, "--variant",
             kData + "/spec.json", "--backend", fixture_.cliName(), "--dump", dump});
        QVERIFY2(result.exitCode == 0, qPrintable(result.err));
        const io::SafetensorsFile file(dump.toStdString());
        const int64_t tokens = int64_t(query_.size());
        QCOMPARE(file.info("knn_neighbors").shape, (std::vector<int64_t>{tokens, 4}));
        for (const char* name : {"knn_distances", "knn_next_token"})
            QVERIFY(file.contains(name));
        for (const char* name : {"knn_target", "knn_top", "mix_top", "p_lm", "p_knn", "p_mix"})
            QCOMPARE(file.info(name).shape, (std::vector<int64_t>{tokens}));
        const Trace expected = runKnn(
            query_, R"({"knn": {"datastore": "a.txt", "k": 4, "lambda": 0.5, "temperature": 2}})");
        QVERIFY(test::maxAbsDiff(file.loadF32("p_mix"), expected.internals.at("p_mix")) < 1e-6);
    }

    void datastoreAndMixtureMatchTheCpu() {
        const std::unique_ptr<Backend> cpuBackend = makeCpuBackend();
        const auto onCpu = loadModel((test::goldenRoot() + "/gpt2").toStdString(), *cpuBackend);
        QVERIFY(chunks_.size() > 1);
        const variants::KnnDatastore cpuStore = variants::buildDatastore(*onCpu, chunks_);
        QVERIFY(store_.values == cpuStore.values);
        QVERIFY(test::maxAbsDiff(store_.keys, cpuStore.keys) < 1e-4);

        const variants::VariantSpec spec =
            parseVariantSpec(R"({"knn": {"datastore": "a.txt", "k": 4, "lambda": 0}})");
        CaptureRequest capture;
        capture.internals = capture.logits = true;
        const ModelInput input{{40, 41, 42, 43, 44, 45, 46, 47}, {}, {}};
        const Trace cpu = variants::forwardKnn(*onCpu, input, capture, spec, cpuStore);
        const Trace here = variants::forwardKnn(*gpt2_, input, capture, spec, store_);
        QVERIFY(test::maxAbsDiff(here.logits, cpu.logits) < 1e-4);
        QVERIFY(test::maxAbsDiff(here.internals.at("p_lm"), cpu.internals.at("p_lm")) < 1e-5);
        QVERIFY(test::maxAbsDiff(here.internals.at("p_mix"), here.internals.at("p_lm")) == 0.0);
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestKnnLm)
#include "test_knn_lm.moc"
