#pragma once
// What the kNN-LM view reads from a pass's internals (variants/knn_lm.h): the neighbours of each
// position with the datastore text around them, and the scored token's p_LM, p_kNN and p_mix,
// re-mixed at any λ without running the model again:
//   p_mix = λ·p_kNN + (1 − λ)·p_LM,
// with p_LM the pass's own (internal p_lm) and p_kNN summed from the stored neighbours' distances
// and next tokens through variants::neighbourWeights, the kernel the pass itself used. The loss
// is the mean −ln p of the next token over the positions that have one (the last position's
// scored token is only the mixture's guess).

#include "forward_runner.h"
#include "knn_store.h"

#include <QString>
#include <vector>

namespace headlight::app {

struct KnnPositionReadout {
    int32_t target = 0;  // the token scored
    bool scored = false; // the target is the text's next token (not the mixture's guess)
    double pLm = 0.0, pKnn = 0.0, pMix = 0.0;
};

struct KnnMixture {
    double lambda = 0.0;
    std::vector<KnnPositionReadout> positions; // [T]
    int scored = 0;                            // positions with a known next token
    double lmLoss = 0.0, mixLoss = 0.0;        // mean nats per scored token
};

struct KnnNeighbour {
    int rank = 0;         // 0 = nearest
    int64_t row = 0;      // datastore row = position in the datastore text
    float distance = 0.f; // squared L2
    double weight = 0.0;  // its share of p_kNN
    int32_t next = 0;     // the stored next token
};

// Whether the result ran kNN-LM (its internals hold the neighbours and a store came with it).
bool hasKnnReadout(const ForwardResult& result);
// The pass re-mixed at `lambda` (in [0, 1]); the pass's own λ when `lambda` is negative.
KnnMixture remixKnn(const ForwardResult& result, double lambda);
std::vector<KnnNeighbour> knnNeighbours(const ForwardResult& result, int position);

// The datastore text around a neighbour: `before` tokens up to and including the context's last
// token, the stored next token, then `after` tokens.
struct KnnContext {
    QStringList before; // token labels, as the token strip shows them
    QString next;
    QStringList after;
    QString text; // the same tokens as written, the next one in brackets: "the ca[t] sat"
};
KnnContext knnContext(const KnnStore& store, int64_t row, int before, int after);

// The position the view shows when none is selected: where retrieval moves the scored token's
// probability most (|ln p_mix − ln p_LM| largest), among the scored positions.
int mostChangedPosition(const KnnMixture& mixture);
} // namespace headlight::app
