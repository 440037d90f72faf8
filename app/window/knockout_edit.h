#pragma once
// One change of the pass's knockouts and residual edits (head knockouts from the knockout grid,
// SAE feature edits from the feature editor) as a step of the variant dock's undo stack: undo
// and redo hand the workspace the whole set, so every view re-runs with it.

#include "forward_runner.h"
#include "workspace.h"

#include <QUndoCommand>

namespace headlight::app {

class KnockoutEdit : public QUndoCommand {
public:
    KnockoutEdit(Workspace* workspace, HeadKnockouts before, HeadKnockouts after, QString text)
        : workspace_(workspace)
        , before_(std::move(before))
        , after_(std::move(after)) {
        setText(text);
    }
    void undo() override { workspace_->setKnockouts(before_); }
    void redo() override { workspace_->setKnockouts(after_); }

private:
    Workspace* workspace_;
    HeadKnockouts before_, after_;
};
} // namespace headlight::app
