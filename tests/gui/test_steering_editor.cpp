// The variant dock's steering vector on the zoo model pre_ln: a vector made by `headlight steer`
// (as users make them) opens, its edit changes the output exactly as `headlight inspect
// --steering-vector` does (itself checked against PyTorch in test_residual_edit_goldens) and the
// attention of the layers after its hook; made in the window from the same texts (in the
// background) it is the vector the command wrote; the slider and the box set α, each one undo step,
// and undo brings the earlier α and then the clean pass back; the scenario a scene saves holds it;
// a vector of another width, a truncated file and a missing one are refused in one line, with the
// pass untouched.
#include "cli_runner.h"
#include "figure_view.h"
#include "io/steering_vector_file.h"
#include "main_window.h"
#include "open_window.h"
#include "output_change_check.h"
#include "steering_dialog.h"
#include "steering_editor.h"
#include "temp_files.h"
#include "variant_dock.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <algorithm>
#include <cmath>

using namespace headlight;

namespace {
constexpr int kSteeringWaitMs = 60000; // a generous ceiling for a loaded CI machine
const QString kSteeringModel = QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/pre_ln");
const QString kSteeringText = QStringLiteral("The cat sat on the mat.");
const QString kSteeringHook = QStringLiteral("blocks.1.hook_resid_post");
const QStringList kPositiveTexts = {"I love this.", "What a lovely day.", "We adore it."};
const QStringList kNegativeTexts = {"I hate this.", "What an awful day.", "We detest it."};

// The workspace's result once a pass after `after` has finished.
const app::ForwardResult* passAfter(app::Workspace* workspace, quint64 after) {
    const auto ready = [&] {
        const app::ForwardResult* r = workspace->result();
        return r && r->serial > after && !workspace->runner().busy();
    };
    return QTest::qWaitFor(ready, kSteeringWaitMs) ? workspace->result() : nullptr;
}

bool openSteeringModel(app::MainWindow& window) {
    return test::openShown(window, kSteeringModel, kSteeringText, kSteeringWaitMs);
}

// The largest change of any attention weight of layer `layer` and above.
float attentionChangeFrom(const Tensor& a, const Tensor& b, int64_t layer) {
    const std::size_t perLayer = a.size() / std::size_t(a.shape()[0]);
    float largest = 0.0f;
    for (std::size_t i = std::size_t(layer) * perLayer; i < a.size(); ++i)
        largest = std::max(largest, std::abs(a.values()[i] - b.values()[i]));
    return largest;
}
} // namespace

class TestSteeringEditor : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString vector_;

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        const QString positive = dir_.filePath("positive.txt");
        const QString negative = dir_.filePath("negative.txt");
        test::writeFile(positive, (kPositiveTexts.join('\n') + '\n').toUtf8());
        test::writeFile(negative, (kNegativeTexts.join('\n') + '\n').toUtf8());
        vector_ = dir_.filePath("love.safetensors");
        const test::CliResult made =
            test::runHeadlight({"steer", "--model", kSteeringModel, "--positive", positive,
                                "--negative", negative, "--hook", kSteeringHook, "--out", vector_});
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
    }

    void aVectorSteersThePassAsInspectDoes() {
        app::MainWindow window({});
        QVERIFY(openSteeringModel(window));
        app::Workspace* workspace = window.workspace();
        const Tensor clean = workspace->result()->attention;
        app::SteeringEditor* editor = window.variantDock()->steeringEditor();
        editor->strengthBox()->setValue(4.0);
        const quint64 before = workspace->result()->serial;
        QString error;
        QVERIFY2(editor->openVector(vector_, &error), qPrintable(error));
        const app::ForwardResult* r = passAfter(workspace, before);
        QVERIFY(r);
        QCOMPARE(int(r->knockouts.edits.size()), 1);
        QCOMPARE(QString::fromStdString(r->knockouts.edits[0].steeringVector), vector_);
        QCOMPARE(r->knockouts.edits[0].strength, 4.0f);
        QVERIFY2(editor->summary()->text().contains("love.safetensors × 4 at " + kSteeringHook),
                 qPrintable(editor->summary()->text()));
        // Added after block 1, the vector moves the attention of blocks 2 and 3, not of 0 and 1.
        QCOMPARE(attentionChangeFrom(clean, r->attention, 0) -
                     attentionChangeFrom(clean, r->attention, 2),
                 0.0f);
        QVERIFY(attentionChangeFrom(clean, r->attention, 2) > 1e-4f);

        const test::CliResult cli = test::runHeadlight(
            {"inspect", "--model", kSteeringModel, "--text", kSteeringText, "--backend", "cpu",
             "--steering-vector", vector_, "--strength", "4", "--json"});
        QVERIFY2(cli.exitCode == 0, qPrintable(cli.err));
        double largestKl = 0.0;
        test::verifySameOutputChange(r->outputChange,
                                     QJsonDocument::fromJson(cli.out.toUtf8())
                                         .object()["edits"]
                                         .toObject()["positions"]
                                         .toArray(),
                                     largestKl);
        if (QTest::currentTestFailed()) return;
        QVERIFY2(largestKl > 1e-3, "a strength of 4 changes no prediction");

        // The output-effect view shows the steered pass against the clean one.
        workspace->setView(app::ViewKind::VariantEffect);
        QVERIFY(QTest::qWaitFor(
            [&] {
                const app::ForwardResult* shown = workspace->result();
                return shown && shown->output && !workspace->runner().busy();
            },
            kSteeringWaitMs));
        r = workspace->result();
        const render::PanelsFigure* effect = workspace->figureView()->panels();
        QVERIFY(effect);
        QVERIFY2(effect->title.startsWith("Edit effect on the output"), qPrintable(effect->title));
        const auto& bars = std::get<render::BarChartFigure>(effect->panels.at(0));
        QCOMPARE(int(bars.values.size()), int(r->outputChange.size()));
        for (std::size_t t = 0; t < bars.values.size(); ++t)
            QCOMPARE(bars.values[t], float(r->outputChange[t].kl));
        const auto& changed = std::get<render::TableFigure>(effect->panels.at(1));
        const auto flips = std::count_if(r->outputChange.begin(), r->outputChange.end(),
                                         [](const app::PositionChange& c) { return c.flipped(); });
        QCOMPARE(qsizetype(changed.rows.size()), qsizetype(flips));
        window.grab().save(HEADLIGHT_TEST_OUTPUT_DIR "/steering_effect.png");
    }

    // The File menu holds the pane's two ways to a vector, enabled once a model is open.
    void theFileMenuOffersTheVector() {
        app::MainWindow window({});
        app::SteeringEditor* editor = window.variantDock()->steeringEditor();
        QVERIFY(!editor->makeAction()->isEnabled() && !editor->openAction()->isEnabled());
        QMenu* file = window.menuBar()->actions().first()->menu();
        QVERIFY(file && file->actions().contains(editor->makeAction()) &&
                file->actions().contains(editor->openAction()));
        QCOMPARE(editor->makeAction()->text(), QString("&Make steering vector…"));
        QVERIFY(openSteeringModel(window));
        QVERIFY(editor->makeAction()->isEnabled() && editor->openAction()->isEnabled());
    }

    void theSliderAndTheBoxAreUndoSteps() {
        app::MainWindow window({});
        QVERIFY(openSteeringModel(window));
        app::Workspace* workspace = window.workspace();
        app::SteeringEditor* editor = window.variantDock()->steeringEditor();
        QUndoStack* undo = window.variantDock()->undoStack();
        QVERIFY(!editor->slider()->isEnabled());
        editor->strengthBox()->setValue(2.0);
        QString error;
        QVERIFY2(editor->openVector(vector_, &error), qPrintable(error));
        QVERIFY(passAfter(workspace, 0));
        QCOMPARE(editor->slider()->value(), 20);
        const int steps = undo->count();

        // The slider lets go at −1.5; the box then sets 7.25.
        quint64 serial = workspace->result()->serial;
        editor->slider()->setValue(-15);
        const app::ForwardResult* r = passAfter(workspace, serial);
        QVERIFY(r);
        QCOMPARE(r->knockouts.edits.at(0).strength, -1.5f);
        QCOMPARE(editor->strengthBox()->value(), -1.5);
        serial = r->serial;
        editor->strengthBox()->setValue(7.25);
        QMetaObject::invokeMethod(editor->strengthBox(), "editingFinished");
        r = passAfter(workspace, serial);
        QVERIFY(r);
        QCOMPARE(r->knockouts.edits.at(0).strength, 7.25f);
        QCOMPARE(editor->slider()->value(), 73);
        QCOMPARE(undo->count(), steps + 2);
        QVERIFY(undo->undoText().contains("7.25"));

        undo->undo();
        r = passAfter(workspace, r->serial);
        QVERIFY(r);
        QCOMPARE(r->knockouts.edits.at(0).strength, -1.5f);
        QCOMPARE(editor->strengthBox()->value(), -1.5);
        QVERIFY(workspace->scenario().edits == r->knockouts.edits);

        editor->removeVector();
        r = passAfter(workspace, r->serial);
        QVERIFY(r);
        QVERIFY(r->knockouts.edits.empty() && r->outputChange.empty());
        QVERIFY(editor->summary()->text().startsWith("Steering vector: none"));
        QVERIFY(!editor->slider()->isEnabled());
        undo->undo();
        r = passAfter(workspace, r->serial);
        QVERIFY(r);
        QCOMPARE(int(r->knockouts.edits.size()), 1);
    }

    // Made in the window from the same texts, the vector is the one `headlight steer` wrote, and
    // it is then the pass's steering vector; a recipe that cannot run is refused in one line.
    void aVectorMadeInTheWindowIsTheCommands() {
        app::MainWindow window({});
        QVERIFY(openSteeringModel(window));
        app::SteeringEditor* editor = window.variantDock()->steeringEditor();
        const QString path = dir_.filePath("made.safetensors");
        const app::SteeringRecipe recipe{kPositiveTexts, kNegativeTexts,
                                         kSteeringHook.toStdString(), "mean"};
        QSignalSpy made(editor, &app::SteeringEditor::vectorMade);
        QString error;
        QVERIFY2(editor->makeVector(recipe, path, &error), qPrintable(error));
        QVERIFY(made.wait(kSteeringWaitMs));
        QCOMPARE(made.first().first().toString(), path);
        const io::SteeringVectorFile ours = io::readSteeringVector(path.toStdString());
        const io::SteeringVectorFile cli = io::readSteeringVector(vector_.toStdString());
        QCOMPARE(ours.hook, cli.hook);
        QCOMPARE(ours.metadata.at("method"), std::string("difference-of-means"));
        QCOMPARE(ours.direction.size(), cli.direction.size());
        for (std::size_t i = 0; i < ours.direction.size(); ++i)
            QVERIFY(std::abs(ours.direction.data()[i] - cli.direction.data()[i]) <= 1e-6f);
        QVERIFY(passAfter(window.workspace(), 0));
        QCOMPARE(int(window.workspace()->knockouts().edits.size()), 1);
        QCOMPARE(QString::fromStdString(window.workspace()->knockouts().edits[0].steeringVector),
                 path);

        app::SteeringRecipe deep = recipe;
        deep.hook = "blocks.9.hook_resid_post";
        QVERIFY(!editor->makeVector(deep, dir_.filePath("never.safetensors"), &error));
        QVERIFY2(error.contains("blocks.9") && !error.contains('\n'), qPrintable(error));
        app::SteeringRecipe unpaired = recipe;
        unpaired.method = "pca-diff";
        unpaired.negative.removeLast();
        QSignalSpy failed(editor, &app::SteeringEditor::makeFailed);
        QVERIFY2(editor->makeVector(unpaired, dir_.filePath("never.safetensors"), &error),
                 qPrintable(error));
        QVERIFY(failed.wait(kSteeringWaitMs));
        QVERIFY2(failed.first().first().toString().contains(
                     "the positive set has 3 texts and the negative 2"),
                 qPrintable(failed.first().first().toString()));
        QVERIFY(!QFile::exists(dir_.filePath("never.safetensors")));
    }

    // The dialog reads one text per non-empty line and offers each block's output, the middle
    // one first.
    void theDialogReadsTheRecipe() {
        app::SteeringDialog dialog(4);
        const QList<QPlainTextEdit*> boxes = dialog.findChildren<QPlainTextEdit*>();
        QCOMPARE(boxes.size(), 2);
        boxes[0]->setPlainText("I love this.\n\n  \nWhat a lovely day.");
        boxes[1]->setPlainText("I hate this.");
        const QList<QComboBox*> combos = dialog.findChildren<QComboBox*>();
        QCOMPARE(combos.size(), 2);
        QCOMPARE(combos[0]->count(), 4);
        combos[1]->setCurrentText("pca-center");
        const app::SteeringRecipe recipe = dialog.recipe();
        QCOMPARE(recipe.positive, QStringList({"I love this.", "What a lovely day."}));
        QCOMPARE(recipe.negative, QStringList({"I hate this."}));
        QCOMPARE(QString::fromStdString(recipe.hook), QString("blocks.2.hook_resid_post"));
        QCOMPARE(QString::fromStdString(recipe.method), QString("pca-center"));
        dialog.resize(560, 420);
        dialog.show();
        dialog.grab().save(HEADLIGHT_TEST_OUTPUT_DIR "/steering_dialog.png");
    }

    void aVectorThatDoesNotFitIsRefused_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("reason");
        const QString wide = dir_.filePath("wide.safetensors");
        io::writeSteeringVector(
            wide.toStdString(), Tensor({65}, 1.0f),
            {{"format", "headlight-steering-vector"}, {"hook", kSteeringHook.toStdString()}});
        QTest::newRow("another width")
            << wide << "has 65 values but the model's residual stream has 64";
        const QString truncated = dir_.filePath("truncated.safetensors");
        QFile whole(vector_);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        test::writeFile(truncated, whole.read(whole.size() / 2));
        QTest::newRow("truncated") << truncated << "truncated.safetensors";
        QTest::newRow("missing") << dir_.filePath("nowhere.gguf") << "nowhere.gguf";
    }

    void aVectorThatDoesNotFitIsRefused() {
        QFETCH(QString, file);
        QFETCH(QString, reason);
        app::MainWindow window({});
        QVERIFY(openSteeringModel(window));
        app::SteeringEditor* editor = window.variantDock()->steeringEditor();
        const int steps = window.variantDock()->undoStack()->count();
        QString error;
        QVERIFY(!editor->openVector(file, &error));
        QVERIFY2(error.contains(reason) && !error.contains('\n'), qPrintable(error));
        QCOMPARE(window.variantDock()->undoStack()->count(), steps);
        QVERIFY(window.workspace()->knockouts().edits.empty());
    }
};

HEADLIGHT_TEST_MAIN(TestSteeringEditor)
#include "test_steering_editor.moc"
