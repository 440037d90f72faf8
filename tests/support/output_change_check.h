#pragma once
// A pass's output change (knockouts, SAE edits, a steering vector) against the one `headlight
// inspect --json` printed for the same edit, in its "edits" → "positions".

#include "ablation_effect.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <vector>

namespace headlight::test {

// Per position: KL within 1e-5 and the same top-1 token of both passes; `largestKl` gets the
// largest KL. A mismatch fails the calling test (check QTest::currentTestFailed()).
inline void verifySameOutputChange(const std::vector<app::PositionChange>& ours,
                                   const QJsonArray& positions, double& largestKl) {
    QCOMPARE(positions.size(), qsizetype(ours.size()));
    largestKl = 0.0;
    for (qsizetype t = 0; t < positions.size(); ++t) {
        const app::PositionChange& change = ours[std::size_t(t)];
        QVERIFY(std::abs(change.kl - positions[t]["kl"].toDouble()) <= 1e-5);
        QCOMPARE(change.cleanTop, positions[t]["clean_top"].toInt());
        QCOMPARE(change.ablatedTop, positions[t]["ablated_top"].toInt());
        largestKl = std::max(largestKl, change.kl);
    }
}
} // namespace headlight::test
