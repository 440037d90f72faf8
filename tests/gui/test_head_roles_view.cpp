// The head-roles view in the window with the tiny GPT-2 (tests/data/models/gpt2): a repeated text
// gives five layer × head grids whose every cell is the score `headlight heads --probe` prints for
// the same ids (the command's scores are checked against PyTorch in test_heads_cli), and
// toggling a variant re-scores them to what `heads --variant` prints; a text without repeats
// says that duplicate and induction heads need them.
#include "cli_runner.h"
#include "figure_view.h"
#include "golden.h"
#include "main_window.h"
#include "open_window.h"
#include "temp_files.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <set>

using namespace headlight;

namespace {
constexpr int kRolesWaitMs = 60000; // a generous ceiling for a loaded CI machine
const char* const kRoleKeys[] = {"previous_token", "duplicate_token", "induction", "positional",
                                 "sink"};
const char* const kWindowVariant = R"({"mask": {"parts": [{"kind": "band", "window": 2}]}})";

// The view's panels for the pass of `serial` or later.
const render::PanelsFigure* rolesPanels(app::Workspace* workspace, quint64 after) {
    const auto ready = [&] {
        const app::ForwardResult* r = workspace->result();
        return r && r->serial > after && !workspace->runner().busy() &&
               workspace->figureView()->panels();
    };
    if (!QTest::qWaitFor(ready, kRolesWaitMs)) return nullptr;
    return workspace->figureView()->panels();
}

QJsonArray idsOf(const app::ForwardResult& result) {
    QJsonArray ids;
    for (int32_t id : result.ids)
        ids.append(id);
    return ids;
}
} // namespace

class TestHeadRolesView : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // `headlight heads` on the window's ids, with the variant when given: its heads array.
    QJsonArray cliScores(const app::ForwardResult& result, const QByteArray& variant) {
        const QString probe = dir_.filePath("probe.json");
        test::writeFile(probe, QJsonDocument(QJsonArray{idsOf(result)}).toJson());
        QStringList args{"heads",     "--model", test::goldenRoot() + "/gpt2",
                         "--backend", "cpu",     "--probe",
                         probe,       "--json"};
        if (!variant.isEmpty()) {
            const QString spec = dir_.filePath("variant.json");
            test::writeFile(spec, variant);
            args << "--variant" << spec;
        }
        const auto run = test::runHeadlight(args);
        if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
        return QJsonDocument::fromJson(run.out.toUtf8()).object()["heads"].toArray();
    }

    void verifyPanelsMatch(const render::PanelsFigure& panels, const QJsonArray& expected) {
        QCOMPARE(int(panels.panels.size()), 5);
        QCOMPARE(expected.size(), 8); // 2 layers × 4 heads
        for (std::size_t role = 0; role < 5; ++role) {
            const auto& grid = std::get<render::HeatmapFigure>(panels.panels[role]);
            QCOMPARE(grid.rows, 2);
            QCOMPARE(grid.cols, 4);
            for (qsizetype i = 0; i < expected.size(); ++i) {
                const double want =
                    expected[i].toObject()["scores"].toObject()[kRoleKeys[role]].toDouble(NAN);
                const double ours = grid.values[std::size_t(i)];
                QVERIFY2(std::isfinite(ours) && std::abs(ours - want) <= 1e-5,
                         qPrintable(QStringLiteral("%1 of head %2: %3 vs %4")
                                        .arg(kRoleKeys[role])
                                        .arg(i)
                                        .arg(ours)
                                        .arg(want)));
            }
        }
    }

    // The window at 1280 x 800 on the tiny GPT-2 with `text`, on the Head roles view: its panels.
    static const render::PanelsFigure* openRolesView(app::MainWindow& window, const QString& text) {
        if (!test::openShown(window, test::goldenRoot() + "/gpt2", text, kRolesWaitMs))
            return nullptr;
        window.workspace()->setView(app::ViewKind::HeadRoles);
        return rolesPanels(window.workspace(), 0);
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void gridsHoldTheCommandsScoresAndFollowTheVariant() {
        app::MainWindow window({});
        app::Workspace* workspace = window.workspace();
        const render::PanelsFigure* panels =
            openRolesView(window, "the cat sat on the mat. the cat sat on the mat.");
        QVERIFY(panels);
        QVERIFY2(panels->caption.contains("repeated") && panels->caption.contains("strongest"),
                 qPrintable(panels->caption));
        verifyPanelsMatch(*panels, cliScores(*workspace->result(), {}));
        const QImage pixels = workspace->figureView()->grab().toImage();
        QVERIFY(!pixels.isNull());
        pixels.save(QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/head_roles_view.png"));

        const quint64 before = workspace->result()->serial;
        workspace->setVariant(QJsonDocument::fromJson(kWindowVariant).object());
        panels = rolesPanels(workspace, before);
        QVERIFY(panels);
        verifyPanelsMatch(*panels, cliScores(*workspace->result(), kWindowVariant));
    }

    void aTextWithoutRepeatsSaysWhatTheRolesNeed() {
        app::MainWindow window({});
        app::Workspace* workspace = window.workspace();
        const render::PanelsFigure* panels = openRolesView(window, "xyz");
        QVERIFY(panels);
        const std::vector<int32_t>& ids = workspace->result()->ids;
        QVERIFY(ids.size() >= 2);
        QCOMPARE(std::set<int32_t>(ids.begin(), ids.end()).size(), ids.size());
        QVERIFY2(panels->caption.contains("0 repeated") &&
                     panels->caption.contains("type a passage twice"),
                 qPrintable(panels->caption));
    }
};

HEADLIGHT_TEST_MAIN(TestHeadRolesView)
#include "test_head_roles_view.moc"
