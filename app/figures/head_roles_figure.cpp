#include "head_roles_figure.h"

#include "analysis/head_roles.h"

#include <algorithm>
#include <functional>
#include <set>

namespace headlight::app {
namespace {

struct Role {
    QString name;
    std::function<double(const analysis::HeadRoleScores&)> score;
};

const std::vector<Role>& roles() {
    static const std::vector<Role> all{
        {QStringLiteral("Previous token"), [](const auto& s) { return s.previousToken; }},
        {QStringLiteral("Duplicate token"), [](const auto& s) { return s.duplicateToken; }},
        {QStringLiteral("Induction"), [](const auto& s) { return s.induction; }},
        {QStringLiteral("Positional (text: the offset)"),
         [](const auto& s) { return s.positional; }},
        {QStringLiteral("Sink (first token)"), [](const auto& s) { return s.sink; }},
    };
    return all;
}

// How many tokens repeat an earlier one: duplicate and induction heads need some.
int repeatedTokens(const std::vector<int32_t>& ids) {
    std::set<int32_t> seen;
    int repeats = 0;
    for (int32_t id : ids)
        repeats += !seen.insert(id).second;
    return repeats;
}

render::Panel roleGrid(const Role& role, const std::vector<analysis::HeadRoleScores>& scores,
                       int layers, int heads, const ViewState& s, bool offsets) {
    render::HeatmapFigure f;
    f.title = role.name;
    shapeLayerHeadGrid(f, layers, heads);
    for (const analysis::HeadRoleScores& head : scores) {
        const double value = role.score(head);
        f.values.push_back(float(value));
        f.cellText << (offsets ? QStringLiteral("−%1").arg(head.positionalOffset)
                               : QString::number(value, 'f', 2));
    }
    f.colorBar = {s.colormap, 0.0f, 1.0f, QStringLiteral("Score")};
    f.emphasisedRow = s.layer;
    return f;
}

// "induction L1H3 0.62" for the role's strongest head.
QString strongest(const Role& role, const std::vector<analysis::HeadRoleScores>& scores,
                  int heads) {
    const auto best = std::max_element(scores.begin(), scores.end(), [&](auto& a, auto& b) {
        return role.score(a) < role.score(b);
    });
    const int index = int(best - scores.begin());
    return QStringLiteral("%1 L%2H%3 %4")
        .arg(role.name.section(' ', 0, 0).toLower())
        .arg(index / heads)
        .arg(index % heads)
        .arg(role.score(*best), 0, 'f', 2);
}

} // namespace

HeadRoleScoring headRoleScoring(const ForwardResult& r, const ViewState& s) {
    HeadRoleScoring scoring;
    if (r.attention.empty() && !r.streamed) return scoring; // no text yet
    scoring.layers = r.layerCount();
    scoring.heads = r.headCount();
    if (const auto& probed = s.probeRoles;
        probed && probed->layers == scoring.layers && probed->heads == scoring.heads) {
        scoring.scores = probed->scores;
        scoring.probes = probed->probes;
        scoring.source = probeSetPhrase(probed->probes);
        return scoring;
    }
    const auto tokens = int64_t(r.ids.size());
    if (r.attention.empty()) {
        scoring.why = QStringLiteral("Head roles need every head's whole map, which a text this "
                                     "long does not keep: shorten the text, or score on probes.");
        return scoring;
    }
    if (tokens < 2) {
        scoring.why = QStringLiteral("Head roles need a text of two tokens or more.");
        return scoring;
    }
    if (r.attention.rank() != 4 || r.attention.dim(2) != tokens || r.attention.dim(3) != tokens) {
        scoring.why = QStringLiteral("This variant's attention is not token by token (it pools "
                                     "or compresses the sequence): its heads have no role "
                                     "scores.");
        return scoring;
    }
    analysis::HeadRoleAccumulator accumulator(scoring.layers, scoring.heads);
    accumulator.add(r.ids, r.attention);
    scoring.scores = accumulator.scores();
    const int repeats = repeatedTokens(r.ids);
    scoring.source = QStringLiteral("this text (%1 tokens, %2 repeated)%3")
                         .arg(tokens)
                         .arg(repeats)
                         .arg(repeats == 0 ? QStringLiteral(": duplicate and induction need "
                                                            "repeated tokens, so type a passage "
                                                            "twice")
                                           : QString());
    return scoring;
}

render::PanelsFigure headRolesFigure(const ForwardResult& r, const ViewState& s) {
    const QString title = QStringLiteral("Head roles · %1").arg(r.model ? r.model->name() : "");
    const HeadRoleScoring scoring = headRoleScoring(r, s);
    if (scoring.scores.empty())
        return render::noteFigure(
            title, scoring.why.isEmpty() ? QStringLiteral("Head roles need a text.") : scoring.why);
    render::PanelsFigure f;
    f.title = title;
    QStringList best;
    for (const Role& role : roles())
        best << strongest(role, scoring.scores, scoring.heads);
    f.caption = QStringLiteral("Scored on %1 · strongest: %2")
                    .arg(scoring.source, best.join(QStringLiteral(", ")));
    f.columns = 3;
    for (std::size_t i = 0; i < roles().size(); ++i)
        f.panels.push_back(
            roleGrid(roles()[i], scoring.scores, scoring.layers, scoring.heads, s, i == 3));
    return f;
}
} // namespace headlight::app
