#include "training_figure.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headlight::app {
namespace {

struct Role {
    const char* name;
    double analysis::HeadRoleScores::*score;
};
constexpr Role kRoles[] = {{"previous token", &analysis::HeadRoleScores::previousToken},
                           {"duplicate token", &analysis::HeadRoleScores::duplicateToken},
                           {"induction", &analysis::HeadRoleScores::induction}};

bool everyStepKnown(const io::CheckpointSeries& series) {
    for (const io::SeriesCheckpoint& checkpoint : series.checkpoints)
        if (!checkpoint.step) return false;
    return true;
}

// The x of each checkpoint: its training step, or its index when a step is unknown.
std::vector<double> positions(const io::CheckpointSeries& series) {
    const bool steps = everyStepKnown(series);
    std::vector<double> x;
    for (std::size_t i = 0; i < series.checkpoints.size(); ++i)
        x.push_back(steps ? double(*series.checkpoints[i].step) : double(i));
    return x;
}

std::vector<QPointF> pointsOf(const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<QPointF> points;
    for (std::size_t i = 0; i < y.size() && i < x.size(); ++i)
        points.emplace_back(x[i], y[i]);
    return points;
}

QString headName(int index, int heads) {
    return QStringLiteral("L%1 H%2")
        .arg(index / std::max(heads, 1))
        .arg(index % std::max(heads, 1));
}

int headsOf(const TrainingCurves& curves) {
    return curves.metrics.empty() ? 1 : curves.metrics.front().heads;
}

render::LineChartFigure lossChart(const TrainingCurves& curves, const std::vector<double>& x) {
    std::vector<double> loss, icl, heldOut;
    bool anyHeldOut = false;
    for (std::size_t i = 0; i < curves.metrics.size(); ++i) {
        loss.push_back(curves.metrics[i].loss);
        icl.push_back(curves.metrics[i].iclScore);
        const auto& held = curves.series.checkpoints[i].heldOutLoss;
        anyHeldOut = anyHeldOut || held.has_value();
        heldOut.push_back(held.value_or(std::numeric_limits<double>::quiet_NaN()));
    }
    render::LineChartFigure f;
    f.title = QStringLiteral("Loss and in-context learning (nats)");
    f.xAxis = everyStepKnown(curves.series) ? QStringLiteral("Training step")
                                            : QStringLiteral("Checkpoint");
    f.yAxis = QStringLiteral("nats");
    f.points = pointsOf(x, loss);
    f.name = QStringLiteral("loss of the text");
    if (anyHeldOut)
        f.others.push_back({QStringLiteral("held-out loss (run)"), pointsOf(x, heldOut)});
    f.others.push_back({QStringLiteral("ICL score"), pointsOf(x, icl)});
    return f;
}

render::LineChartFigure rolesChart(const TrainingCurves& curves, const std::vector<double>& x) {
    render::LineChartFigure f;
    f.title = QStringLiteral("Strongest head of each role (detect_head score)");
    f.xAxis = everyStepKnown(curves.series) ? QStringLiteral("Training step")
                                            : QStringLiteral("Checkpoint");
    f.yAxis = QStringLiteral("score");
    for (const Role& role : kRoles) {
        const RoleLine line = strongestHeadLine(curves.metrics, role.score);
        const QString name = QStringLiteral("%1 %2").arg(QLatin1String(role.name),
                                                         headName(line.head, headsOf(curves)));
        if (f.points.empty() && f.name.isEmpty()) {
            f.points = pointsOf(x, line.scores);
            f.name = name;
        } else {
            f.others.push_back({name, pointsOf(x, line.scores)});
        }
    }
    return f;
}

QString captionOf(const TrainingCurves& curves) {
    if (curves.metrics.empty()) return {};
    const CheckpointMetrics& first = curves.metrics.front();
    return QStringLiteral("%1 checkpoints · a text of %2 tokens · ICL score: loss at token %3 − "
                          "at token %4 · probes: %5 × %6 random tokens repeated, seed %7")
        .arg(curves.series.checkpoints.size())
        .arg(first.tokens)
        .arg(first.icl.late)
        .arg(first.icl.early)
        .arg(ScrubProbes{}.count)
        .arg(first.probeLength)
        .arg(ScrubProbes{}.seed);
}

QString number(double value) {
    return std::isfinite(value) ? QString::number(value, 'g', 9) : QString();
}
} // namespace

render::PanelsFigure trainingFigure(const TrainingCurves& curves, int marker) {
    render::PanelsFigure figure;
    figure.title =
        QStringLiteral("Over training: %1").arg(QString::fromStdString(curves.series.name));
    figure.caption = captionOf(curves);
    figure.columns = 1;
    if (curves.metrics.empty()) {
        figure.panels.push_back(render::NotePanel{
            QStringLiteral("No checkpoint measured yet: the lines appear once every checkpoint "
                           "of the series has run on the text.")});
        return figure;
    }
    const std::vector<double> x = positions(curves.series);
    render::LineChartFigure loss = lossChart(curves, x);
    render::LineChartFigure roles = rolesChart(curves, x);
    if (marker >= 0 && std::size_t(marker) < x.size())
        loss.marker = roles.marker = x[std::size_t(marker)];
    figure.panels.push_back(std::move(loss));
    figure.panels.push_back(std::move(roles));
    return figure;
}

render::DataTable trainingTable(const TrainingCurves& curves) {
    render::DataTable table;
    table.header = QStringList{"checkpoint", "label", "step", "loss", "held_out_loss", "icl_score"};
    std::vector<RoleLine> lines;
    for (const Role& role : kRoles) {
        lines.push_back(strongestHeadLine(curves.metrics, role.score));
        table.header << QStringLiteral("%1 %2").arg(QLatin1String(role.name),
                                                    headName(lines.back().head, headsOf(curves)));
    }
    for (std::size_t i = 0; i < curves.metrics.size(); ++i) {
        const io::SeriesCheckpoint& checkpoint = curves.series.checkpoints[i];
        QStringList row{QString::number(i),
                        QString::fromStdString(checkpoint.label),
                        checkpoint.step ? QString::number(*checkpoint.step) : QString(),
                        number(curves.metrics[i].loss),
                        number(checkpoint.heldOutLoss.value_or(std::nan(""))),
                        number(curves.metrics[i].iclScore)};
        for (const RoleLine& line : lines)
            row << number(line.scores[i]);
        table.rows.push_back(row);
    }
    return table;
}
} // namespace headlight::app
