// The query-key embedding (core/analysis/query_key_embedding.h) against an independent
// computation in the test: the same scaling and translation written out, then Eigen's JacobiSVD
// of the centred joint points (not the eigen-solver of the covariance the engine uses): the
// coordinates are the projections on the top two right singular vectors up to sign, the variance
// shares are σ²/Σσ² and sum to at most 1, the query and key centroids coincide in the plane, and
// padding takes no part. Token kinds from offsets; bad shapes are refused.
#include "analysis/query_key_embedding.h"

#include <Eigen/SVD>
#include <QTest>
#include <cmath>
#include <numeric>
#include <random>

using namespace headlight;
using analysis::TokenKind;

namespace {

Tensor qkRandomTensor(int64_t rows, int64_t cols, unsigned seed, float shift) {
    std::mt19937 random(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> values(std::size_t(rows * cols));
    for (std::size_t i = 0; i < values.size(); ++i)
        values[i] = normal(random) * (1.0f + float(i % 7)) + shift;
    return Tensor({rows, cols}, std::move(values));
}

// The embedding's points, scaled and translated as the header says, written out here.
Eigen::MatrixXd qkJointPoints(const Tensor& q, const Tensor& k, int64_t d, int64_t qHead,
                              int64_t kHead, const std::vector<int>& rows) {
    Eigen::MatrixXd Q(rows.size(), d), K(rows.size(), d);
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (int64_t j = 0; j < d; ++j) {
            Q(Eigen::Index(r), j) = q.data()[rows[r] * q.dim(1) + qHead * d + j];
            K(Eigen::Index(r), j) = k.data()[rows[r] * k.dim(1) + kHead * d + j];
        }
    const auto spread = [](const Eigen::MatrixXd& m) {
        return (m.rowwise() - m.colwise().mean()).rowwise().norm().mean();
    };
    const double c = std::sqrt(spread(K) / spread(Q));
    Q *= c;
    K /= c;
    K.rowwise() += Q.colwise().mean() - K.colwise().mean();
    Eigen::MatrixXd joint(2 * rows.size(), d);
    joint << Q, K;
    return joint;
}

void qkCompareWithSvd(const analysis::QueryKeyEmbedding& e, const Eigen::MatrixXd& joint,
                      const std::vector<int>& rows) {
    const Eigen::MatrixXd centred = joint.rowwise() - joint.colwise().mean();
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(centred, Eigen::ComputeThinV);
    const Eigen::VectorXd s2 = svd.singularValues().array().square();
    const Eigen::MatrixXd projected = centred * svd.matrixV().leftCols(2);
    const auto n = Eigen::Index(rows.size());
    for (int c = 0; c < 2; ++c) {
        QVERIFY(std::abs(e.explained[std::size_t(c)] - s2(c) / s2.sum()) < 1e-9);
        const double sign = projected(0, c) * e.queries[std::size_t(2 * rows[0] + c)] < 0 ? -1 : 1;
        for (Eigen::Index r = 0; r < n; ++r) {
            const std::size_t at = std::size_t(2 * rows[std::size_t(r)] + c);
            QVERIFY2(std::abs(e.queries[at] - sign * projected(r, c)) < 1e-4,
                     qPrintable(QString("query %1 component %2").arg(r).arg(c)));
            QVERIFY(std::abs(e.keys[at] - sign * projected(n + r, c)) < 1e-4);
        }
    }
    QVERIFY(e.explained[0] >= e.explained[1]);
    QVERIFY(e.explained[0] + e.explained[1] <= 1.0 + 1e-12);
}
} // namespace

class TestQueryKeyEmbedding : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Grouped-query attention: 4 query heads read 2 key heads; query head 3 reads key head 1.
    void projectionIsTheTopTwoPrincipalSubspace() {
        const int64_t tokens = 23, d = 6;
        const Tensor q = qkRandomTensor(tokens, 4 * d, 7, 0.5f);
        const Tensor k = qkRandomTensor(tokens, 2 * d, 11, -2.0f);
        std::vector<int> rows(tokens);
        std::iota(rows.begin(), rows.end(), 0);
        for (int head = 0; head < 4; ++head) {
            const auto e = analysis::embedQueryKeyHead(q, k, 4, 2, head, {});
            QCOMPARE(e.tokens, int(tokens));
            qkCompareWithSvd(e, qkJointPoints(q, k, d, head, head / 2, rows), rows);
            // The key and query centroids coincide in the plane (the key translation).
            for (int c = 0; c < 2; ++c) {
                double queryMean = 0.0, keyMean = 0.0;
                for (int t = 0; t < tokens; ++t) {
                    queryMean += e.queries[std::size_t(2 * t + c)] / double(tokens);
                    keyMean += e.keys[std::size_t(2 * t + c)] / double(tokens);
                }
                QVERIFY(std::abs(queryMean) < 1e-4 && std::abs(keyMean) < 1e-4);
            }
            QVERIFY(e.distanceCorrelation >= -1.0 && e.distanceCorrelation <= 1.0);
        }
    }

    // Each component's largest-magnitude loading is positive: the same input gives the same
    // picture, and negating every query and key mirrors nothing but keeps the signs' rule.
    void signConventionIsDeterministic() {
        const Tensor q = qkRandomTensor(9, 8, 3, 0.0f), k = qkRandomTensor(9, 8, 5, 1.0f);
        const auto a = analysis::embedQueryKeyHead(q, k, 1, 1, 0, {});
        const auto b = analysis::embedQueryKeyHead(q, k, 1, 1, 0, {});
        QCOMPARE(a.queries, b.queries);
        std::vector<float> negatedQ(q.values().begin(), q.values().end());
        std::vector<float> negatedK(k.values().begin(), k.values().end());
        for (float& v : negatedQ)
            v = -v;
        for (float& v : negatedK)
            v = -v;
        const auto c = analysis::embedQueryKeyHead(Tensor(q.shape(), negatedQ),
                                                   Tensor(k.shape(), negatedK), 1, 1, 0, {});
        for (std::size_t i = 0; i < a.queries.size(); ++i)
            QVERIFY(std::abs(a.queries[i] + c.queries[i]) < 1e-4);
    }

    // Past 512 tokens the correlation reads every step-th query and key (step 3 for 1100).
    void longTextsCorrelateASubsample() {
        const int tokens = 1100, step = 3;
        const Tensor q = qkRandomTensor(tokens, 4, 19, 0.0f),
                     k = qkRandomTensor(tokens, 4, 23, 1.0f);
        const auto e = analysis::embedQueryKeyHead(q, k, 1, 1, 0, {});
        std::vector<int> rows(tokens);
        std::iota(rows.begin(), rows.end(), 0);
        const Eigen::MatrixXd joint = qkJointPoints(q, k, 4, 0, 0, rows);
        Eigen::VectorXd distance((tokens + step - 1) / step * ((tokens + step - 1) / step));
        Eigen::VectorXd dot(distance.size());
        Eigen::Index at = 0;
        for (int i = 0; i < tokens; i += step)
            for (int j = 0; j < tokens; j += step, ++at) {
                distance(at) = std::hypot(e.queryX(i) - e.keyX(j), e.queryY(i) - e.keyY(j));
                dot(at) = joint.row(i).dot(joint.row(tokens + j));
            }
        const Eigen::VectorXd dd = distance.array() - distance.mean(),
                              dk = dot.array() - dot.mean();
        const double expected = dd.dot(dk) / (dd.norm() * dk.norm());
        QVERIFY2(std::abs(e.distanceCorrelation - expected) < 1e-4,
                 qPrintable(QString("%1 against %2").arg(e.distanceCorrelation).arg(expected)));
    }

    void paddingTakesNoPart() {
        const Tensor q = qkRandomTensor(10, 4, 13, 0.0f), k = qkRandomTensor(10, 4, 17, 0.0f);
        std::vector<uint8_t> valid(10, 1);
        valid[8] = valid[9] = 0;
        const auto e = analysis::embedQueryKeyHead(q, k, 1, 1, 0, valid);
        QVERIFY(std::isnan(e.queries[16]) && std::isnan(e.keys[19]));
        std::vector<int> rows(8);
        std::iota(rows.begin(), rows.end(), 0);
        qkCompareWithSvd(e, qkJointPoints(q, k, 4, 0, 0, rows), rows);
    }

    void refusesShapesThatDisagree() {
        const Tensor q = qkRandomTensor(5, 8, 1, 0.0f), k = qkRandomTensor(5, 4, 2, 0.0f);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 analysis::embedQueryKeyHead(q, k, 2, 1, 2, {}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 analysis::embedQueryKeyHead(q, k, 2, 2, 0, {}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 analysis::embedQueryKeyHead(q, k, 2, 1, 0, {1, 1}));
    }

    // "[CLS] Hello, world! It's x2" as BERT-style offsets: special, word start, punctuation, a
    // word after a space, byte-fallback pieces sharing a start, a piece after letters.
    void tokenKindsFromOffsets() {
        const std::u32string text = U"Hello, world! It's x2";
        const std::vector<std::pair<int, int>> offsets = {{0, 0},   {0, 5},   {5, 6},   {6, 12},
                                                          {12, 13}, {13, 16}, {16, 18}, {18, 20},
                                                          {18, 20}, {20, 21}};
        const std::vector<TokenKind> expected = {TokenKind::Special,      TokenKind::WordStart,
                                                 TokenKind::Punctuation,  TokenKind::WordStart,
                                                 TokenKind::Punctuation,  TokenKind::WordStart,
                                                 TokenKind::Punctuation,  TokenKind::WordStart,
                                                 TokenKind::Continuation, TokenKind::Continuation};
        QVERIFY(analysis::classifyTokens(text, offsets) == expected);
        QCOMPARE(QString(analysis::tokenKindName(TokenKind::Continuation)),
                 QString("word continuation"));
    }
};

HEADLIGHT_TEST_APPLESS_MAIN(TestQueryKeyEmbedding)
#include "test_query_key_embedding.moc"
