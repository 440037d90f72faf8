#include "patching_dialog.h"

#include "figure_view.h"
#include "patching_figure.h"
#include "text_input.h"
#include "workspace.h"

#include <QComboBox>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace headlight::app {

struct PatchingDialog::Outcome {
    std::optional<PatchResult> result;
    QStringList labels;   // the corrupted text's tokens
    QString target, foil; // as the title names them
    QString error;        // one line when refused
};

namespace {

// TOKEN as one id: "#123", or text that the tokenizer makes into exactly one token.
int tokenIdOf(const LoadedModel& model, const QString& token) {
    if (token.startsWith('#')) {
        bool ok = false;
        const int id = token.mid(1).toInt(&ok);
        if (ok) return id;
    } else if (model.tokenizer) {
        const tokenize::Encoding e =
            model.tokenizer->encode(token.toStdString(), std::nullopt, false);
        if (e.ids.size() == 1) return e.ids.front();
    }
    throw std::invalid_argument("'" + token.toStdString() +
                                "' is not one token of the vocabulary (give #ID, or a word as the "
                                "vocabulary spells it, with its leading space where it has one)");
}

QString tokenName(const LoadedModel& model, int id) {
    const std::string text = model.tokenizer ? model.tokenizer->tokenString(id) : std::string();
    return text.empty() ? QStringLiteral("#%1").arg(id) : QString::fromStdString(text);
}
} // namespace

PatchingDialog::PatchingDialog(Workspace* workspace, QWidget* parent)
    : QDialog(parent)
    , workspace_(workspace)
    , clean_(new QLineEdit)
    , corrupt_(new QLineEdit)
    , target_(new QLineEdit)
    , foil_(new QLineEdit)
    , grid_(new QComboBox)
    , run_(new QPushButton(tr("&Run")))
    , cancel_(new QPushButton(tr("Cancel")))
    , progress_(new QProgressBar)
    , status_(new QLabel)
    , view_(new FigureView)
    , watcher_(new QFutureWatcher<std::shared_ptr<Outcome>>(this)) {
    setWindowTitle(tr("Activation patching"));
    setObjectName(QStringLiteral("patchingDialog"));
    foil_->setPlaceholderText(tr("the corrupted run's top prediction"));
    target_->setPlaceholderText(tr("one token, or #ID"));
    grid_->addItem(tr("layers × positions (residual stream)"), int(PatchGrid::LayersByPositions));
    grid_->addItem(tr("layers × heads (head outputs)"), int(PatchGrid::LayersByHeads));
    status_->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(tr("C&lean text"), clean_);
    form->addRow(tr("C&orrupted text"), corrupt_);
    form->addRow(tr("&Target token"), target_);
    form->addRow(tr("&Foil token"), foil_);
    form->addRow(tr("&Grid"), grid_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(progress_, 1);
    buttons->addWidget(run_);
    buttons->addWidget(cancel_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(buttons);
    layout->addWidget(status_);
    layout->addWidget(view_, 1);
    view_->setFigure(render::EmptyFigure{tr("Run to see how much each patch recovers.")});
    clean_->setText(workspace_->text());
    resize(900, 700);
    setRunning(false);
    connect(run_, &QPushButton::clicked, this, &PatchingDialog::start);
    connect(cancel_, &QPushButton::clicked, this, [this] { cancelled_ = true; });
    connect(watcher_, &QFutureWatcherBase::finished, this, &PatchingDialog::collect);
}

PatchingDialog::~PatchingDialog() {
    cancelled_ = true;
    watcher_->waitForFinished();
}

bool PatchingDialog::running() const {
    return watcher_->isRunning();
}

void PatchingDialog::setRunning(bool running) {
    run_->setEnabled(!running);
    cancel_->setEnabled(running);
    progress_->setVisible(running);
}

void PatchingDialog::start() {
    std::shared_ptr<const LoadedModel> model = workspace_->sharedModel();
    if (!model || running()) return;
    PatchSetup setup;
    Outcome labels;
    try {
        setup.clean = prepareText(model->tokenizer.get(), clean_->text()).input;
        const PreparedText corrupt = prepareText(model->tokenizer.get(), corrupt_->text());
        setup.corrupt = corrupt.input;
        labels.labels = corrupt.labels;
        setup.target = tokenIdOf(*model, target_->text().trimmed());
        if (!foil_->text().trimmed().isEmpty())
            setup.foil = tokenIdOf(*model, foil_->text().trimmed());
    } catch (const std::exception& error) {
        status_->setText(tr("⚠ %1").arg(QString::fromUtf8(error.what())));
        return;
    }
    setup.grid = PatchGrid(grid_->currentData().toInt());
    setup.variant = workspace_->variant();
    // Why pause and wait: the backend runs one pass at a time and the runner may be mid-pass.
    workspace_->runner().setPaused(true);
    workspace_->runner().waitForIdle();
    cancelled_ = false;
    progress_->setValue(0);
    status_->setText(tr("Running one pass per cell…"));
    setRunning(true);
    watcher_->setFuture(QtConcurrent::run([this, model, setup, labels] {
        auto outcome = std::make_shared<Outcome>(labels);
        const auto report = [this](int done, int total) {
            QMetaObject::invokeMethod(this, [this, done, total] {
                progress_->setMaximum(total);
                progress_->setValue(done);
            });
            return !cancelled_.load();
        };
        try {
            outcome->result = runPatching(*model->model, setup, report);
            if (outcome->result) {
                outcome->target = tokenName(*model, outcome->result->target);
                outcome->foil = tokenName(*model, outcome->result->foil);
            }
        } catch (const std::exception& error) {
            outcome->error = QString::fromUtf8(error.what()).section('\n', 0, 0);
        }
        return outcome;
    }));
}

void PatchingDialog::collect() {
    const std::shared_ptr<Outcome> outcome = watcher_->result();
    workspace_->runner().setPaused(false);
    setRunning(false);
    if (!outcome->error.isEmpty()) {
        status_->setText(tr("⚠ %1").arg(outcome->error));
    } else if (!outcome->result) {
        status_->setText(tr("Cancelled."));
    } else {
        const PatchResult& r = *outcome->result;
        status_->setText(tr("Logit difference %1 − %2: clean %3, corrupted %4.")
                             .arg(outcome->target, outcome->foil)
                             .arg(r.cleanDifference, 0, 'g', 5)
                             .arg(r.corruptDifference, 0, 'g', 5));
        view_->setFigure(patchingFigure(r, outcome->labels, outcome->target, outcome->foil));
    }
    Q_EMIT finished(outcome->result.has_value());
}
} // namespace headlight::app
