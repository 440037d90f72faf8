#include "knn_figure.h"

#include "counted.h"
#include "knn_readout.h"

#include <QFileInfo>
#include <algorithm>
#include <cmath>

namespace headlight::app {
namespace {

// The neighbour grid's categories, in the order of its legend.
enum KnnCell { OtherNext = 0, Context = 1, ScoredNext = 2, Continuation = 3, kKnnCells = 4 };

// The vocabulary's spelling of a token, a byte-level space (Ġ) or line break (Ċ) made visible.
QString tokenText(const ForwardResult& r, int32_t id) {
    const tokenize::Tokenizer* tokenizer = r.model ? r.model->tokenizer.get() : nullptr;
    const std::string spelling = tokenizer ? tokenizer->tokenString(id) : std::string();
    if (spelling.empty()) return QStringLiteral("#%1").arg(id);
    return QString::fromStdString(spelling)
        .replace(QChar(0x120), QStringLiteral("␣"))
        .replace(QChar(0x10A), QStringLiteral("↵"));
}

QString quoted(const ForwardResult& r, int32_t id) {
    return QStringLiteral("‘%1’").arg(tokenText(r, id));
}

int shownPosition(const KnnMixture& mixture, const ViewState& s) {
    return s.query >= 0 && s.query < int(mixture.positions.size()) ? s.query
                                                                   : mostChangedPosition(mixture);
}

// One row per neighbour: the datastore text before its stored next token, that token, and
// what followed it; the row label gives its rank, distance and share of p_kNN.
render::CategoryGridFigure neighbourGrid(const ForwardResult& r, int t, int32_t target) {
    render::CategoryGridFigure f;
    f.cols = kKnnContextBefore + 1 + kKnnContextAfter;
    for (const KnnNeighbour& n : knnNeighbours(r, t)) {
        const KnnContext context =
            knnContext(*r.knnStore, n.row, kKnnContextBefore, kKnnContextAfter);
        const int pad = kKnnContextBefore - int(context.before.size());
        for (int c = 0; c < pad; ++c) {
            f.categories.push_back(-1);
            f.cellText << QString();
        }
        for (const QString& label : context.before) {
            f.categories.push_back(Context);
            f.cellText << label;
        }
        f.categories.push_back(n.next == target ? ScoredNext : OtherNext);
        f.cellText << context.next;
        for (int c = 0; c < kKnnContextAfter; ++c) {
            const bool known = c < context.after.size();
            f.categories.push_back(known ? Continuation : -1);
            f.cellText << (known ? context.after[c] : QString());
        }
        f.rowLabels << QStringLiteral("%1 · d %2 · w %3")
                           .arg(n.rank + 1)
                           .arg(double(n.distance), 0, 'g', 3)
                           .arg(n.weight, 0, 'f', 2);
        ++f.rows;
    }
    f.title = QStringLiteral("Neighbours of position %1 in the datastore, nearest first (d: "
                             "squared L2 distance, w: weight in p_kNN)")
                  .arg(t);
    f.rowAxis = QStringLiteral("Rank");
    f.colAxis = QStringLiteral("Datastore text around the stored next token");
    f.legendTitle = QStringLiteral("Token");
    f.categoryCount = kKnnCells;
    f.legendLabels = {QStringLiteral("stored next ≠ scored"), QStringLiteral("context"),
                      QStringLiteral("stored next = scored"), QStringLiteral("what followed")};
    return f;
}

render::BarChartFigure probabilityBars(const ForwardResult& r, const KnnMixture& m, int t) {
    const KnnPositionReadout& p = m.positions[std::size_t(t)];
    render::BarChartFigure f;
    f.title = QStringLiteral("P(%1) after %2 %3")
                  .arg(quoted(r, p.target), r.tokens.value(t),
                       p.scored ? QStringLiteral("(the next token)")
                                : QStringLiteral("(the mixture's guess: no next token)"));
    f.labels = {QStringLiteral("p_LM"), QStringLiteral("p_kNN"),
                QStringLiteral("p_mix, λ = %1").arg(m.lambda, 0, 'f', 2)};
    f.values = {float(p.pLm), float(p.pKnn), float(p.pMix)};
    f.valueAxis = QStringLiteral("Probability"); // the title names the token
    f.maxValue = 1.0;
    f.decimals = 3;
    f.emphasised = 2;
    return f;
}

render::HeatmapFigure probabilityRows(const ForwardResult& r, const KnnMixture& m,
                                      const ViewState& s) {
    render::HeatmapFigure f;
    f.title = QStringLiteral("Probability of the next token; the p_mix row prints ln p_mix − "
                             "ln p_LM, what retrieval gains (nats)");
    f.rows = 3;
    f.cols = int(m.positions.size());
    f.rowLabels = {QStringLiteral("p_LM"), QStringLiteral("p_kNN"), QStringLiteral("p_mix")};
    f.colLabels = r.tokens;
    for (double KnnPositionReadout::*field :
         {&KnnPositionReadout::pLm, &KnnPositionReadout::pKnn, &KnnPositionReadout::pMix})
        for (const KnnPositionReadout& p : m.positions) {
            f.values.push_back(float(p.*field));
            const bool gain = field == &KnnPositionReadout::pMix;
            f.cellText << (!gain      ? QString::number(p.*field, 'f', 2)
                           : p.scored ? QString::asprintf("%+.2f", std::log(p.pMix / p.pLm))
                                      : QStringLiteral("guess"));
        }
    f.rowAxis = QStringLiteral("Distribution");
    f.colAxis = QStringLiteral("Input token (scores the token after it)");
    f.colorBar = {s.colormap, 0.0, 1.0, QStringLiteral("Probability")};
    f.emphasisedRow = 2;
    return f;
}

QString lossCaption(const ForwardResult& r, const KnnMixture& m) {
    const variants::KnnLm& knn = *r.variant.knn;
    return QStringLiteral("%1 · LM %2 nats/token (ppl %3) · kNN-LM at λ = %4: %5 (ppl %6) · "
                          "%7, %8, k = %9, τ = %10")
        .arg(counted(m.scored, QStringLiteral("scored token")))
        .arg(m.lmLoss, 0, 'f', 3)
        .arg(std::exp(m.lmLoss), 0, 'f', 2)
        .arg(m.lambda, 0, 'f', 2)
        .arg(m.mixLoss, 0, 'f', 3)
        .arg(std::exp(m.mixLoss), 0, 'f', 2)
        .arg(QFileInfo(QString::fromStdString(r.knnStore->path)).fileName(),
             counted(r.knnStore->datastore.size(), QStringLiteral("stored state")))
        .arg(knn.k)
        .arg(double(knn.temperature), 0, 'g', 4);
}
} // namespace

render::PanelsFigure knnNeighboursFigure(const ForwardResult& result, const ViewState& state) {
    if (!hasKnnReadout(result))
        return {QStringLiteral("kNN-LM neighbours"),
                {},
                1,
                {render::NotePanel{QStringLiteral(
                    "This pass did not run kNN-LM. Build a datastore (File ▸ Build kNN datastore "
                    "from text file…) or open a variant spec with a \"knn\" section "
                    "(docs/variants.md, item 18).")}}};
    const KnnMixture mixture = remixKnn(result, state.knnLambda);
    const int t = shownPosition(mixture, state);
    const int32_t target = mixture.positions[std::size_t(t)].target;
    render::PanelsFigure f;
    f.title = QStringLiteral("kNN-LM (Khandelwal et al. 2020) at position %1, %2 → %3")
                  .arg(t)
                  .arg(result.tokens.value(t), quoted(result, target));
    if (state.query < 0) f.title += QStringLiteral(" (largest change; click a token for another)");
    f.caption = lossCaption(result, mixture);
    // Why one column: the neighbours' text needs the page's width.
    f.columns = 1;
    f.panels = {neighbourGrid(result, t, target), probabilityRows(result, mixture, state),
                probabilityBars(result, mixture, t)};
    return f;
}

render::DataTable knnNeighbourTable(const ForwardResult& result, double lambda) {
    render::DataTable table;
    table.header = {"position",           "token",       "target",  "rank", "distance", "weight",
                    "datastore_position", "stored_next", "context", "p_lm", "p_knn",    "p_mix"};
    const KnnMixture mixture = remixKnn(result, lambda);
    const auto number = [](double x) { return QString::number(x, 'g', 9); };
    for (int t = 0; t < int(mixture.positions.size()); ++t) {
        const KnnPositionReadout& p = mixture.positions[std::size_t(t)];
        for (const KnnNeighbour& n : knnNeighbours(result, t)) {
            const KnnContext context =
                knnContext(*result.knnStore, n.row, kKnnContextBefore, kKnnContextAfter);
            table.rows.push_back({QString::number(t), result.tokens.value(t),
                                  tokenText(result, p.target), QString::number(n.rank + 1),
                                  number(double(n.distance)), number(n.weight),
                                  QString::number(n.row), context.next, context.text, number(p.pLm),
                                  number(p.pKnn), number(p.pMix)});
        }
    }
    return table;
}
} // namespace headlight::app
