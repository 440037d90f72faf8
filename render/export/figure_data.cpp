#include "export/figure_data.h"

#include "export/atomic_write.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <cmath>

namespace headlight::render {
namespace {

QString number(double value) {
    return QString::number(value, 'g', 9);
}

std::string jsonList(const QStringList& items) {
    return QJsonDocument(QJsonArray::fromStringList(items))
        .toJson(QJsonDocument::Compact)
        .toStdString();
}

// [rows × cols] values under their labels; the corner names both axes.
DataTable matrixTable(const QString& rowAxis, const QString& colAxis, const QStringList& rowLabels,
                      const QStringList& colLabels, const std::vector<float>& values) {
    DataTable table;
    table.header << QStringLiteral("%1 \\ %2").arg(rowAxis, colAxis) << colLabels;
    const auto cols = std::size_t(colLabels.size());
    for (qsizetype r = 0; r < rowLabels.size(); ++r) {
        QStringList row{rowLabels[r]};
        for (std::size_t c = 0; c < cols; ++c)
            row << number(values[std::size_t(r) * cols + c]);
        table.rows.push_back(row);
    }
    return table;
}

FigureData heatmapData(const HeatmapFigure& f) {
    if (f.values.size() != std::size_t(f.rows) * std::size_t(f.cols) ||
        f.rowLabels.size() != f.rows || f.colLabels.size() != f.cols)
        throw ExportError("the heatmap's values and labels disagree in size");
    FigureData data;
    data.table = matrixTable(f.rowAxis, f.colAxis, f.rowLabels, f.colLabels, f.values);
    data.tensors.push_back({"values", {f.rows, f.cols}, f.values});
    data.metadata = {
        {"title", f.title.toStdString()},      {"row_axis", f.rowAxis.toStdString()},
        {"col_axis", f.colAxis.toStdString()}, {"value", f.colorBar.label.toStdString()},
        {"row_labels", jsonList(f.rowLabels)}, {"col_labels", jsonList(f.colLabels)}};
    return data;
}

FigureData tokenLinesData(const TokenLinesFigure& f) {
    const auto t = int64_t(f.tokens.size());
    if (f.weights.size() != std::size_t(t * t))
        throw ExportError("the token lines' weights and tokens disagree in size");
    FigureData data;
    data.table = matrixTable(QStringLiteral("Query token"), QStringLiteral("Key token"), f.tokens,
                             f.tokens, f.weights);
    data.tensors.push_back({"weights", {t, t}, f.weights});
    data.metadata = {{"title", f.title.toStdString()}, {"tokens", jsonList(f.tokens)}};
    return data;
}

FigureData modelGridData(const ModelGridFigure& f) {
    const std::size_t t = std::size_t(f.tokens);
    if (f.attention.size() != std::size_t(f.layers) * std::size_t(f.heads) * t * t)
        throw ExportError("the model grid's attention and sizes disagree");
    FigureData data;
    data.table.header = QStringList{"layer", "head", "query", "key", "weight"};
    std::size_t at = 0;
    for (int l = 0; l < f.layers; ++l)
        for (int h = 0; h < f.heads; ++h)
            for (std::size_t q = 0; q < t; ++q)
                for (std::size_t k = 0; k < t; ++k)
                    data.table.rows.push_back({QString::number(l), QString::number(h),
                                               QString::number(q), QString::number(k),
                                               number(f.attention[at++])});
    data.tensors.push_back({"attention", {f.layers, f.heads, f.tokens, f.tokens}, f.attention});
    data.metadata = {{"title", f.title.toStdString()}};
    return data;
}

QString bandOf(double median, const Thresholds& t) {
    if (median < t.low) return QStringLiteral("low");
    return median <= t.high ? QStringLiteral("middle") : QStringLiteral("high");
}

void violinTable(const ViolinFigure& f, FigureData& data) {
    data.table.header = QStringList{"panel", "layer", "head", "q1", "median", "q3", "band"};
    for (const ViolinPanel& panel : f.panels)
        for (const ViolinShape& v : panel.violins)
            data.table.rows.push_back({panel.title, QString::number(panel.layer),
                                       QString::number(v.head), number(v.q1), number(v.median),
                                       number(v.q3), bandOf(v.median, f.thresholds)});
}

// Per-panel tensors indexed by head number (the table keeps the figure's sorted order).
void violinTensors(const ViolinFigure& f, FigureData& data) {
    int heads = 0;
    for (const ViolinPanel& panel : f.panels)
        for (const ViolinShape& v : panel.violins)
            heads = std::max(heads, v.head + 1);
    const auto p = int64_t(f.panels.size());
    const auto g = int64_t(f.grid.size());
    std::vector<float> q1(std::size_t(p * heads)), median(q1.size()), q3(q1.size());
    std::vector<float> density(q1.size() * std::size_t(g));
    for (std::size_t i = 0; i < f.panels.size(); ++i)
        for (const ViolinShape& v : f.panels[i].violins) {
            const std::size_t at = i * std::size_t(heads) + std::size_t(v.head);
            q1[at] = v.q1;
            median[at] = v.median;
            q3[at] = v.q3;
            if (v.density.size() == std::size_t(g))
                std::copy(v.density.begin(), v.density.end(), density.begin() + long(at * g));
        }
    data.tensors = {{"q1", {p, heads}, q1},
                    {"median", {p, heads}, median},
                    {"q3", {p, heads}, q3},
                    {"density", {p, heads, g}, density},
                    {"grid", {g}, f.grid}};
}

FigureData violinData(const ViolinFigure& f) {
    FigureData data;
    violinTable(f, data);
    violinTensors(f, data);
    QStringList panels;
    for (const ViolinPanel& panel : f.panels)
        panels << panel.title;
    data.metadata = {
        {"title", f.title.toStdString()},
        {"value", f.valueAxis.toStdString()},
        {"panels", jsonList(panels)},
        {"thresholds", jsonList({number(f.thresholds.low), number(f.thresholds.high)})}};
    return data;
}
FigureData singleFigureData(const Figure& figure) {
    struct Data {
        FigureData operator()(const EmptyFigure& f) const {
            throw ExportError("nothing to export: " + f.message.toStdString());
        }
        FigureData operator()(const HeatmapFigure& f) const { return heatmapData(f); }
        FigureData operator()(const ModelGridFigure& f) const { return modelGridData(f); }
        FigureData operator()(const TokenLinesFigure& f) const { return tokenLinesData(f); }
        FigureData operator()(const ViolinFigure& f) const { return violinData(f); }
    };
    return std::visit(Data{}, figure);
}

struct PanelRows {
    DataTable& table;
    const QString& name;
    void operator()(const NotePanel&) const {}
    void operator()(const HeatmapFigure& f) const {
        for (int r = 0; r < f.rows; ++r)
            for (int c = 0; c < f.cols; ++c)
                add(f.rowLabels.value(r), f.colLabels.value(c),
                    number(f.values[std::size_t(r * f.cols + c)]));
    }
    void operator()(const BarChartFigure& f) const {
        for (std::size_t i = 0; i < f.values.size(); ++i)
            add(f.labels.value(qsizetype(i)), QString(), number(f.values[i]));
    }
    void operator()(const CategoryGridFigure& f) const {
        for (int r = 0; r < f.rows; ++r)
            for (int c = 0; c < f.cols; ++c)
                add(f.rowLabels.value(r), f.colLabels.value(c, QString::number(c)),
                    QString::number(f.categories[std::size_t(r * f.cols + c)]));
    }
    // Scatter panels have a table of their own (scatterPanelsData).
    void operator()(const ScatterFigure&) const {}
    void operator()(const ScatterGridFigure&) const {}
    void operator()(const TableFigure& f) const {
        for (std::size_t r = 0; r < f.rows.size(); ++r)
            for (qsizetype c = 0; c < f.headers.size(); ++c)
                add(QString::number(r), f.headers[c], f.rows[r].value(c));
    }
    // A line's name as the row, x as the column.
    void operator()(const LineChartFigure& f) const {
        for (const QPointF p : f.points)
            add(f.name, number(p.x()), number(p.y()));
        for (const LineSeries& line : f.others)
            for (const QPointF p : line.points)
                add(line.name, number(p.x()), number(p.y()));
    }
    void add(const QString& row, const QString& col, const QString& value) const {
        table.rows.push_back({name, row, col, value});
    }
};

// A line's points as a tensor [N, 2] of (x, y).
DataTensor lineTensor(const std::string& name, const std::vector<QPointF>& points) {
    std::vector<float> xy;
    for (const QPointF p : points)
        xy.insert(xy.end(), {float(p.x()), float(p.y())});
    return {name, {int64_t(points.size()), 2}, std::move(xy)};
}

// Panel `i` as a tensor, when it has numbers (a line chart: one per line, "panel{i}.{line}").
void addPanelTensor(FigureData& data, std::size_t i, const Panel& panel) {
    const std::string name = "panel" + std::to_string(i);
    if (const auto* f = std::get_if<LineChartFigure>(&panel)) {
        data.tensors.push_back(lineTensor(name + ".0", f->points));
        for (std::size_t k = 0; k < f->others.size(); ++k)
            data.tensors.push_back(
                lineTensor(name + "." + std::to_string(k + 1), f->others[k].points));
        data.metadata[name + ".title"] = f->title.toStdString();
    } else if (const auto* f = std::get_if<HeatmapFigure>(&panel)) {
        data.tensors.push_back({name, {f->rows, f->cols}, f->values});
        data.metadata[name + ".title"] = f->title.toStdString();
    } else if (const auto* f = std::get_if<BarChartFigure>(&panel)) {
        data.tensors.push_back({name, {int64_t(f->values.size())}, f->values});
        data.metadata[name + ".title"] = f->title.toStdString();
    } else if (const auto* f = std::get_if<CategoryGridFigure>(&panel)) {
        data.tensors.push_back(
            {name, {f->rows, f->cols}, {f->categories.begin(), f->categories.end()}});
        data.metadata[name + ".title"] = f->title.toStdString();
    }
}

QString panelTitle(const Panel& panel, std::size_t i) {
    const auto* heatmap = std::get_if<HeatmapFigure>(&panel);
    const auto* bars = std::get_if<BarChartFigure>(&panel);
    const auto* grid = std::get_if<CategoryGridFigure>(&panel);
    const auto* table = std::get_if<TableFigure>(&panel);
    const auto* lines = std::get_if<LineChartFigure>(&panel);
    const QString title = heatmap ? heatmap->title
                          : bars  ? bars->title
                          : grid  ? grid->title
                          : table ? table->title
                          : lines ? lines->title
                                  : QString();
    return title.isEmpty() ? QStringLiteral("panel %1").arg(i) : title;
}

// A scatter's drawn points as rows (panel, role, position, token, kind, x, y) and as a tensor
// [N, 2] of their coordinates.
void addScatter(FigureData& data, const QString& panel, const std::string& name,
                const ScatterFigure& f) {
    std::vector<float> xy;
    for (const ScatterPoint& p : f.points) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
        data.table.rows.push_back({panel, p.key ? QStringLiteral("key") : QStringLiteral("query"),
                                   QString::number(p.token), f.labels.value(p.token),
                                   p.category >= 0 ? f.categories.value(p.category) : QString(),
                                   number(p.x), number(p.y)});
        xy.insert(xy.end(), {float(p.x), float(p.y)});
    }
    data.tensors.push_back({name, {int64_t(xy.size() / 2), 2}, std::move(xy)});
}

// A view of scatters: its first scatter panel (a second one draws the same points coloured
// another way, a grid beside it the overview), or, without one, every cell of its scatter grids,
// named by their titles.
FigureData scatterPanelsData(const PanelsFigure& f) {
    FigureData data;
    data.table.header = QStringList{"panel", "role", "position", "token", "kind", "x", "y"};
    for (std::size_t i = 0; i < f.panels.size(); ++i)
        if (const auto* s = std::get_if<ScatterFigure>(&f.panels[i])) {
            addScatter(data, s->title, "panel" + std::to_string(i), *s);
            data.metadata["title"] = f.title.toStdString();
            data.metadata["caption"] = f.caption.toStdString();
            return data;
        }
    for (std::size_t i = 0; i < f.panels.size(); ++i) {
        const std::string name = "panel" + std::to_string(i);
        if (const auto* g = std::get_if<ScatterGridFigure>(&f.panels[i])) {
            for (std::size_t c = 0; c < g->cells.size(); ++c)
                addScatter(data, g->cells[c].title, name + "." + std::to_string(c), g->cells[c]);
        }
    }
    data.metadata["title"] = f.title.toStdString();
    data.metadata["caption"] = f.caption.toStdString();
    return data;
}

bool hasScatter(const PanelsFigure& f) {
    return std::any_of(f.panels.begin(), f.panels.end(), [](const Panel& p) {
        return std::holds_alternative<ScatterFigure>(p) ||
               std::holds_alternative<ScatterGridFigure>(p);
    });
}

FigureData panelsData(const PanelsFigure& f) {
    if (hasScatter(f)) return scatterPanelsData(f);
    FigureData data;
    data.table.header = QStringList{"panel", "row", "column", "value"};
    for (std::size_t i = 0; i < f.panels.size(); ++i) {
        const QString name = panelTitle(f.panels[i], i);
        std::visit(PanelRows{data.table, name}, f.panels[i]);
        addPanelTensor(data, i, f.panels[i]);
    }
    if (data.tensors.empty())
        throw ExportError("nothing to export: the view's panels hold no numbers");
    data.metadata["title"] = f.title.toStdString();
    data.metadata["caption"] = f.caption.toStdString();
    return data;
}
} // namespace

FigureData figureData(const PageContent& content) {
    if (const auto* panels = std::get_if<PanelsFigure>(&content)) return panelsData(*panels);
    return singleFigureData(std::get<Figure>(content));
}

QString csvField(const QString& text) {
    static const QString special = QStringLiteral(",\"\r\n");
    if (std::none_of(text.begin(), text.end(), [](QChar c) { return special.contains(c); }))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

QByteArray csvBytes(const DataTable& table) {
    QByteArray bytes;
    const auto line = [&bytes](const QStringList& fields) {
        QStringList escaped;
        for (const QString& field : fields)
            escaped << csvField(field);
        bytes += escaped.join(QLatin1Char(',')).toUtf8() + '\n';
    };
    line(table.header);
    for (const QStringList& row : table.rows)
        line(row);
    return bytes;
}

void writeCsv(const QString& path, const DataTable& table, const QByteArray& comments) {
    writeBytesAtomically(path, comments + csvBytes(table));
}
} // namespace headlight::render
