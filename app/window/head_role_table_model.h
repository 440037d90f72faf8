#pragma once
// Every head's role scores as table rows (the head table beside the head-roles view): layer,
// head, the five roles of docs/head-roles.md with the positional score's offset, and each
// head's copying score once the model's circuits have been read. Sorting goes through
// kSortRole (the number, not its text), and a score column sorts largest first on its first
// click (Qt::InitialSortOrderRole).

#include "analysis/head_roles.h"
#include "export/figure_data.h"

#include <QAbstractTableModel>
#include <vector>

namespace headlight::app {

class HeadRoleTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Layer,
        Head,
        PreviousToken,
        Duplicate,
        Induction,
        Positional,
        Offset,
        Sink,
        Copying
    };
    static constexpr int kSortRole = Qt::UserRole;

    using QAbstractTableModel::QAbstractTableModel;

    // Layer-major scores of `heads` heads per layer; `copying` per head, or empty for none (the
    // column is then left out).
    void setScores(int heads, std::vector<analysis::HeadRoleScores> scores,
                   std::vector<double> copying);
    bool hasCopying() const { return !copying_.empty(); }
    int layerOf(int row) const { return row / std::max(heads_, 1); }
    int headOf(int row) const { return row % std::max(heads_, 1); }
    int rowOf(int layer, int head) const { return layer * heads_ + head; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

    // Every row in head order with full-precision numbers, for the clipboard and CSV.
    render::DataTable table() const;

private:
    double value(int row, int column) const;

    int heads_ = 0;
    std::vector<analysis::HeadRoleScores> scores_;
    std::vector<double> copying_;
};
} // namespace headlight::app
