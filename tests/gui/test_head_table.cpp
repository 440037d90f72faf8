// The head table and the Circuits view in the window, on the zoo model `copy` (2 layers × 4
// heads): scored on generated probes, the table and the head-roles view hold the numbers
// `headlight heads --seed --probes --length --json` prints for the same seed, and again after a
// variant is toggled; a score column's header sorts its largest first; a row click selects that
// head; the table exports to CSV; a scenario records the probe set. The Circuits view lists the
// strongest pairs of `headlight heads --circuits` and its copying scores, which then join the
// table, and `headlight export --view circuits` writes it.
#include "background_job.h"
#include "cli_runner.h"
#include "figure_view.h"
#include "head_role_table_model.h"
#include "head_roles_dock.h"
#include "io/scene_file.h"
#include "main_window.h"
#include "open_window.h"
#include "scene_files.h"
#include "temp_files.h"
#include "zoo_models.h"

#include <QComboBox>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {
constexpr int kTableWaitMs = 60000; // a generous ceiling for a loaded CI machine
const char* const kTableVariant = R"({"mask": {"parts": [{"kind": "band", "window": 2}]}})";
const analysis::GeneratedProbeSet kTableProbes{3, 4, 6};

// The score columns of the table, by the JSON key `headlight heads --json` gives each.
const std::pair<int, const char*> kTableKeys[] = {
    {app::HeadRoleTableModel::PreviousToken, "previous_token"},
    {app::HeadRoleTableModel::Duplicate, "duplicate_token"},
    {app::HeadRoleTableModel::Induction, "induction"},
    {app::HeadRoleTableModel::Positional, "positional"},
    {app::HeadRoleTableModel::Offset, "positional_offset"},
    {app::HeadRoleTableModel::Sink, "sink"},
};

QString copyFolder() {
    return test::zooModelsRoot() + "/copy";
}

double tableValue(const app::HeadRoleTableModel& model, int row, int column) {
    return model.data(model.index(row, column), app::HeadRoleTableModel::kSortRole).toDouble();
}

QString headLabel(const QJsonObject& head) {
    return QStringLiteral("L%1H%2").arg(head["layer"].toInt()).arg(head["head"].toInt());
}
} // namespace

class TestHeadTable : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    // `headlight heads` on `copy` with the probes of kTableProbes (and the variant when given).
    QJsonObject cliHeads(const QByteArray& variant, bool circuits) {
        QStringList args{"heads",
                         "--model",
                         copyFolder(),
                         "--backend",
                         "cpu",
                         "--seed",
                         QString::number(kTableProbes.seed),
                         "--probes",
                         QString::number(kTableProbes.count),
                         "--length",
                         QString::number(kTableProbes.length),
                         "--json"};
        if (circuits) args << "--circuits";
        if (!variant.isEmpty()) {
            const QString spec = dir_.filePath("table_variant.json");
            test::writeFile(spec, variant);
            args << "--variant" << spec;
        }
        const auto run = test::runHeadlight(args);
        if (run.exitCode != 0) qWarning("%s", qPrintable(run.err));
        return QJsonDocument::fromJson(run.out.toUtf8()).object();
    }

    // Every head's six scores in the table equal the command's.
    static void verifyTableMatches(const app::HeadRoleTableModel& model, const QJsonArray& heads) {
        QCOMPARE(model.rowCount(), int(heads.size()));
        QCOMPARE(heads.size(), 8); // 2 layers × 4 heads
        for (int row = 0; row < model.rowCount(); ++row) {
            const QJsonObject head = heads[row].toObject();
            QCOMPARE(model.layerOf(row), head["layer"].toInt());
            QCOMPARE(model.headOf(row), head["head"].toInt());
            for (const auto& [column, key] : kTableKeys) {
                const double want = head["scores"].toObject()[key].toDouble(NAN);
                const double ours = tableValue(model, row, column);
                QVERIFY2(std::isfinite(ours) && std::abs(ours - want) <= 1e-5,
                         qPrintable(QStringLiteral("%1 of %2: %3 vs %4")
                                        .arg(key, headLabel(head))
                                        .arg(ours)
                                        .arg(want)));
            }
        }
    }

    // The window at 1280 x 800 on `copy` with a repeated text, showing `view`.
    static bool openCopy(app::MainWindow& window, app::ViewKind view) {
        if (!test::openShown(window, copyFolder(), "abcabc", kTableWaitMs)) return false;
        window.workspace()->setView(view);
        return true;
    }

    // Waits for the probe job to install scores other than `before`.
    static bool waitForProbeScores(app::MainWindow& window, const void* before) {
        app::HeadRolesDock* dock = window.headRolesDock();
        return QTest::qWaitFor(
            [&] {
                const auto& roles = window.workspace()->state().probeRoles;
                return roles && roles.get() != before && !dock->job()->running() &&
                       !window.workspace()->runner().busy();
            },
            kTableWaitMs);
    }

private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(dir_.isValid());
    }

    void probeScoresEqualTheCommandsAndTheTableSortsAndSelects() {
        app::MainWindow window({});
        QVERIFY(openCopy(window, app::ViewKind::HeadRoles));
        app::Workspace* workspace = window.workspace();
        app::HeadRolesDock* dock = window.headRolesDock();
        dock->scoreProbes(kTableProbes);
        QVERIFY(waitForProbeScores(window, nullptr));
        QCOMPARE(dock->scoreOn()->currentIndex(), 1);
        qInfo("probe scoring of %d probes of %d tokens: %.1f ms", kTableProbes.count,
              2 * kTableProbes.length, dock->lastScoringMs());
        const QJsonObject cli = cliHeads({}, false);
        verifyTableMatches(*dock->model(), cli["heads"].toArray());
        QVERIFY2(dock->caption()->text().contains("seed 3"), qPrintable(dock->caption()->text()));

        // The view draws the same scores, and names the probe set.
        QTRY_VERIFY_WITH_TIMEOUT(workspace->figureView()->panels(), kTableWaitMs);
        const render::PanelsFigure* panels = workspace->figureView()->panels();
        QVERIFY2(panels->caption.contains("4 generated probes (seed 3, 6 random tokens"),
                 qPrintable(panels->caption));
        const auto& induction = std::get<render::HeatmapFigure>(panels->panels[2]);
        for (int row = 0; row < 8; ++row)
            QVERIFY(std::abs(induction.values[std::size_t(row)] -
                             tableValue(*dock->model(), row, app::HeadRoleTableModel::Induction)) <=
                    1e-6);

        window.grab().save(QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/head_table_probes.png"));

        // A scenario records the probe set, and its JSON carries it.
        const io::Scenario scenario = workspace->scenario();
        QVERIFY(scenario.headRoleProbes == kTableProbes);
        const QJsonObject probes = io::scenarioToJson(scenario)["head_role_probes"].toObject();
        QCOMPARE(probes["seed"].toInt(), 3);
        QCOMPARE(probes["count"].toInt(), 4);
        QCOMPARE(probes["length"].toInt(), 6);

        // The induction header sorts the largest first.
        QTableView* table = dock->table();
        QHeaderView* header = table->horizontalHeader();
        const int column = app::HeadRoleTableModel::Induction;
        QTest::mouseClick(
            header->viewport(), Qt::LeftButton, {},
            QPoint(header->sectionViewportPosition(column) + header->sectionSize(column) / 2,
                   header->height() / 2));
        QCOMPARE(header->sortIndicatorSection(), column);
        double largest = -1.0;
        for (int row = 0; row < 8; ++row)
            largest = std::max(largest, tableValue(*dock->model(), row, column));
        QCOMPARE(
            table->model()->index(0, column).data(app::HeadRoleTableModel::kSortRole).toDouble(),
            largest);

        // A row click selects its head in the window.
        const QModelIndex third = table->model()->index(2, 0);
        const int layer = table->model()->index(2, app::HeadRoleTableModel::Layer).data().toInt();
        const int head = table->model()->index(2, app::HeadRoleTableModel::Head).data().toInt();
        QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, table->visualRect(third).center());
        QCOMPARE(workspace->state().layer, layer);
        QCOMPARE(workspace->state().head, head);

        // The table as CSV: the command's keys, one row per head, after a comment naming its
        // source.
        const QString csv = dir_.filePath("head_table.csv");
        QVERIFY(dock->exportTable(csv));
        const QStringList lines = QString::fromUtf8(test::readFile(csv)).trimmed().split('\n');
        QCOMPARE(lines.size(), 1 + 1 + 8);
        QVERIFY2(lines[0].startsWith("#") && lines[0].contains("seed 3"), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains("induction"), qPrintable(lines[1]));

        // Toggling a variant scores the probes again, as `heads --variant` does.
        const void* before = workspace->state().probeRoles.get();
        workspace->setVariant(QJsonDocument::fromJson(kTableVariant).object());
        QVERIFY(waitForProbeScores(window, before));
        verifyTableMatches(*dock->model(), cliHeads(kTableVariant, false)["heads"].toArray());

        // Back to the text: the scenario no longer names probes.
        dock->scoreOn()->setCurrentIndex(0);
        QVERIFY(!workspace->state().probeRoles);
        QVERIFY(!workspace->scenario().headRoleProbes);
    }

    void circuitsViewListsTheCommandsStrongestPairs() {
        app::MainWindow window({});
        QVERIFY(openCopy(window, app::ViewKind::Circuits));
        app::Workspace* workspace = window.workspace();
        QTRY_VERIFY_WITH_TIMEOUT(workspace->result() && workspace->result()->circuits &&
                                     !workspace->runner().busy() &&
                                     workspace->figureView()->panels(),
                                 kTableWaitMs);
        const render::PanelsFigure* panels = workspace->figureView()->panels();
        QCOMPARE(int(panels->panels.size()), 5); // Q, K, V, the strongest pairs, copying
        const auto& pairs = std::get<render::TableFigure>(panels->panels[3]);
        const QJsonObject circuits = cliHeads({}, true)["circuits"].toObject();
        const QJsonArray strongest = circuits["strongest"].toArray();
        // The command lists five pairs of each kind, the figure's table the first three.
        QCOMPARE(strongest.size(), 3 * 5);
        QCOMPARE(int(pairs.rows.size()), 3 * 3);
        for (qsizetype i = 0; i < strongest.size(); ++i) {
            if (i % 5 >= 3) continue;
            const QJsonObject pair = strongest[i].toObject();
            const QStringList& row = pairs.rows[std::size_t(i / 5 * 3 + i % 5)];
            QCOMPARE(row[0], pair["kind"].toString());
            QCOMPARE(row[1], headLabel(pair["from"].toObject()));
            QCOMPARE(row[2], headLabel(pair["to"].toObject()));
            QCOMPARE(row[3], QString::number(pair["score"].toDouble(), 'f', 3));
        }
        const QJsonObject first = strongest[0].toObject();
        QVERIFY2(panels->caption.contains(QStringLiteral("Q %1 → %2")
                                              .arg(headLabel(first["from"].toObject()),
                                                   headLabel(first["to"].toObject()))),
                 qPrintable(panels->caption));

        window.grab().save(QStringLiteral(HEADLIGHT_TEST_OUTPUT_DIR "/circuits_view.png"));

        // Each head's copying score joins the table once the weights were read.
        workspace->setView(app::ViewKind::HeadRoles);
        app::HeadRolesDock* dock = window.headRolesDock();
        QTRY_VERIFY_WITH_TIMEOUT(dock->model()->hasCopying(), kTableWaitMs);
        const QJsonArray heads = cliHeads({}, true)["heads"].toArray();
        for (int row = 0; row < dock->model()->rowCount(); ++row)
            QVERIFY(std::abs(tableValue(*dock->model(), row, app::HeadRoleTableModel::Copying) -
                             heads[row].toObject()["scores"].toObject()["copying"].toDouble(NAN)) <=
                    1e-6);
    }

    // A scene names its probe set; `headlight export --scene` draws the view on those probes,
    // with the command's numbers; a count out of range is refused naming the key.
    void aSceneScoresItsProbeSet() {
        const QString json =
            QStringLiteral(R"({"model": "%1", "text": "abcabc", "view": "head-roles",
                "head_role_probes": {"seed": 3, "count": 4, "length": 6}})")
                .arg(copyFolder());
        const io::Scene scene = io::parseScene(json.toStdString(), app::sceneVocabulary());
        QVERIFY(scene.headRoleProbes == kTableProbes);
        const QString sceneFile = dir_.filePath("probes_scene.json");
        test::writeFile(sceneFile, json.toUtf8());
        const QString csv = dir_.filePath("probes_scene.csv");
        const auto run = test::runHeadlight({"export", "--scene", sceneFile, "--out", csv});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonArray heads = cliHeads({}, false)["heads"].toArray();
        int checked = 0;
        for (const QString& line : QString::fromUtf8(test::readFile(csv)).split('\n')) {
            const QStringList cells = line.split(',');
            if (cells.size() != 4 || cells[0] != "Induction") continue;
            const int layer = cells[1].section(' ', 1).toInt(), head = cells[2].toInt();
            const double want =
                heads[layer * 4 + head].toObject()["scores"].toObject()["induction"].toDouble(NAN);
            QVERIFY2(std::abs(cells[3].toDouble() - want) <= 1e-5, qPrintable(line));
            ++checked;
        }
        QCOMPARE(checked, 8);
        try {
            io::parseScene(QString(json).replace("\"count\": 4", "\"count\": 0").toStdString(),
                           app::sceneVocabulary());
            QFAIL("a count of 0 was accepted");
        } catch (const io::SceneError& error) {
            QVERIFY2(QString(error.what()).contains("head_role_probes.count"), error.what());
        }
    }

    void exportWritesTheCircuitsView() {
        for (const char* suffix : {".png", ".csv"}) {
            const QString out = dir_.filePath(QStringLiteral("circuits") + suffix);
            const auto run = test::runHeadlight({"export", "--model", copyFolder(), "--text",
                                                 "abcabc", "--view", "circuits", "--out", out});
            QVERIFY2(run.exitCode == 0, qPrintable(run.err));
            QVERIFY2(test::readFile(out).size() > 100, qPrintable(out));
        }
        const QString csv = QString::fromUtf8(test::readFile(dir_.filePath("circuits.csv")));
        QVERIFY2(csv.contains("composition"), qPrintable(csv.left(400)));
    }
};

HEADLIGHT_TEST_MAIN(TestHeadTable)
#include "test_head_table.moc"
