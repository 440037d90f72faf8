#pragma once
// The recipe of a steering vector made in the window (session/steering_recipe.h): the texts
// steered towards and away from (one per line), the hook, and the method, as `headlight steer`
// takes them from files and options.

#include "steering_recipe.h"

#include <QDialog>

class QComboBox;
class QPlainTextEdit;

namespace headlight::app {

class SteeringDialog : public QDialog {
    Q_OBJECT
public:
    // `layers`: the open model's, for the hooks offered (the output of each block; the middle
    // one chosen, where steering usually works best).
    SteeringDialog(int layers, QWidget* parent = nullptr);

    SteeringRecipe recipe() const;

private:
    QPlainTextEdit* positive_;
    QPlainTextEdit* negative_;
    QComboBox* hook_;
    QComboBox* method_;
};
} // namespace headlight::app
