#include "head_role_table_model.h"

namespace headlight::app {
namespace {

struct ColumnText {
    const char* header;  // short: the table sits in a side dock
    const char* csv;     // the CLI's JSON key, so a CSV reads like `headlight heads --json`
    const char* tooltip; // what the score means
};

const ColumnText kColumns[] = {
    {"L", "layer", "The head's layer"},
    {"H", "head", "The head within its layer"},
    {"Prev", "previous_token", "Previous-token score: the share of attention on key i − 1"},
    {"Dup", "duplicate_token",
     "Duplicate-token score: the share on earlier copies of the query's token"},
    {"Ind", "induction",
     "Induction score: the share on the token after an earlier copy of the query's token"},
    {"Pos", "positional", "Positional score: the mean weight at the best fixed offset"},
    {"Off", "positional_offset", "The offset (1 to 8) of the positional score"},
    {"Sink", "sink", "Sink score: the share of each query's attention on the first token"},
    {"Copy", "copying",
     "Copying score from the weights: the share of positive OV-circuit eigenvalues"},
};
} // namespace

void HeadRoleTableModel::setScores(int heads, std::vector<analysis::HeadRoleScores> scores,
                                   std::vector<double> copying) {
    beginResetModel();
    heads_ = heads;
    scores_ = std::move(scores);
    copying_ = copying.size() == scores_.size() ? std::move(copying) : std::vector<double>{};
    endResetModel();
}

int HeadRoleTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(scores_.size());
}

int HeadRoleTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : (hasCopying() ? Copying + 1 : Copying);
}

double HeadRoleTableModel::value(int row, int column) const {
    const analysis::HeadRoleScores& s = scores_[std::size_t(row)];
    switch (Column(column)) {
    case Layer:
        return layerOf(row);
    case Head:
        return headOf(row);
    case PreviousToken:
        return s.previousToken;
    case Duplicate:
        return s.duplicateToken;
    case Induction:
        return s.induction;
    case Positional:
        return s.positional;
    case Offset:
        return s.positionalOffset;
    case Sink:
        return s.sink;
    case Copying:
        return copying_[std::size_t(row)];
    }
    return 0.0;
}

QVariant HeadRoleTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const double number = value(index.row(), index.column());
    const bool whole =
        index.column() == Layer || index.column() == Head || index.column() == Offset;
    switch (role) {
    case Qt::DisplayRole:
        // Why two decimals, as the view's cells: three do not fit a column of the dock, and
        // the clipboard and CSV keep every digit.
        return whole ? QString::number(int(number)) : QString::number(number, 'f', 2);
    case kSortRole:
        return number;
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant HeadRoleTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return {};
    const ColumnText& column = kColumns[section];
    switch (role) {
    case Qt::DisplayRole:
        return QString::fromUtf8(column.header);
    case Qt::ToolTipRole:
        return QString::fromUtf8(column.tooltip);
    case Qt::InitialSortOrderRole:
        // Why: a score column is clicked to find its strongest heads.
        return int(section == Layer || section == Head ? Qt::AscendingOrder : Qt::DescendingOrder);
    default:
        return {};
    }
}

render::DataTable HeadRoleTableModel::table() const {
    render::DataTable table;
    for (int c = 0; c < columnCount(); ++c)
        table.header << QString::fromUtf8(kColumns[c].csv);
    for (int row = 0; row < rowCount(); ++row) {
        QStringList cells;
        for (int c = 0; c < columnCount(); ++c) {
            const double number = value(row, c);
            cells << (c == Layer || c == Head || c == Offset ? QString::number(int(number))
                                                             : QString::number(number, 'g', 17));
        }
        table.rows.push_back(cells);
    }
    return table;
}
} // namespace headlight::app
