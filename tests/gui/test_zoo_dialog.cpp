// File ▸ Open zoo model… under the offscreen platform: the dialog lists every shipped zoo model
// with the task, description, parameter count, size and held-out result of its zoo.json (checked
// against the files), shows the selected model's loss curve (the points of zoo.json, drawn as a
// line in the chart's pixels), and Open loads the model with its example text; a folder with a
// broken zoo.json is listed with a reason instead of failing.
#include "main_window.h"
#include "temp_files.h"
#include "zoo_dialog.h"
#include "zoo_models.h"

#include <QDialogButtonBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>

using namespace headlight;

namespace {
QJsonObject zooJson(const QString& name) {
    return QJsonDocument::fromJson(test::readFile(test::zooModelsRoot() + "/" + name + "/zoo.json"))
        .object();
}
} // namespace

class TestZooDialog : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void listsEveryModelWithItsMetadata() {
        app::ZooDialog dialog(test::zooModelsRoot());
        const QStringList folders =
            QDir(test::zooModelsRoot()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(dialog.table()->rowCount(), int(folders.size()));
        int checked = 0;
        for (int row = 0; row < dialog.table()->rowCount(); ++row) {
            const QString name = dialog.table()->item(row, 0)->text();
            const QJsonObject zoo = zooJson(name);
            QCOMPARE(dialog.table()->item(row, 1)->text(), zoo["task"].toString());
            QCOMPARE(dialog.table()->item(row, 2)->text(), zoo["description"].toString());
            QCOMPARE(dialog.table()->item(row, 3)->text(),
                     QLocale().toString(zoo["parameters"].toInteger()));
            QVERIFY(dialog.table()->item(row, 4)->text().toDouble() > 0.1);
            const QString loss = QString::number(zoo["result"]["heldout_loss"].toDouble(), 'f', 3);
            if (zoo["task"] == "english")
                QVERIFY(dialog.table()->item(row, 5)->text().startsWith(loss + " nats/byte"));
            if (zoo["task"] == "masked_english")
                QVERIFY(
                    dialog.table()->item(row, 5)->text().startsWith(loss + " nats/masked byte"));
            ++checked;
        }
        QVERIFY(checked >= 9);
    }

    void theSelectedModelsLossCurveIsDrawn() {
        app::ZooDialog dialog(test::zooModelsRoot());
        dialog.resize(900, 700);
        int row = 0;
        while (dialog.table()->item(row, 0)->text() != "pre_ln")
            ++row;
        dialog.table()->selectRow(row);
        const QJsonArray curve = zooJson("pre_ln")["loss_curve"].toArray();
        QCOMPARE(dialog.curve().points.size(), std::size_t(curve.size()));
        QCOMPARE(dialog.curve().points.front().y(), curve[0][1].toDouble());
        QVERIFY(dialog.curve().title.startsWith("pre_ln"));
        dialog.show();
        const QImage image = dialog.grab().toImage();
        int blue = 0; // the curve's Okabe–Ito blue
        for (int y = image.height() / 2; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) {
                const QColor c = image.pixelColor(x, y);
                blue += c.blue() > 150 && c.red() < 60 && c.green() > 80 && c.green() < 150;
            }
        QVERIFY2(blue > 100, qPrintable(QString::number(blue)));
        image.save(QString(HEADLIGHT_TEST_OUTPUT_DIR) + "/zoo_dialog.png");
    }

    void openLoadsTheModelWithItsExampleText() {
        app::MainWindow window({});
        window.show();
        app::ZooDialog dialog(test::zooModelsRoot(), &window);
        QObject::connect(&dialog, &app::ZooDialog::modelChosen, &window,
                         [&](const QString& folder, const QString& text) {
                             window.workspace()->setText(text);
                             window.openCheckpoint(folder);
                         });
        int row = 0;
        while (dialog.table()->item(row, 0)->text() != "rope")
            ++row;
        dialog.table()->selectRow(row);
        dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Open)->click();
        QTRY_VERIFY_WITH_TIMEOUT(window.session().current() &&
                                     window.session().current()->folder.endsWith("rope"),
                                 60000);
        QCOMPARE(window.workspace()->text(), zooJson("rope")["example_text"].toString());
        QTRY_VERIFY_WITH_TIMEOUT(window.workspace()->result() &&
                                     window.workspace()->result()->text ==
                                         window.workspace()->text(),
                                 60000);
    }

    void aBrokenZooJsonIsListedWithAReason() {
        test::ScratchDir dir;
        QDir().mkpath(dir.filePath("broken"));
        test::writeFile(dir.filePath("broken/zoo.json"), "{ not json");
        const std::vector<app::ZooEntry> entries = app::readZoo(dir.path());
        QCOMPARE(entries.size(), std::size_t(1));
        QCOMPARE(entries[0].result, QString("zoo.json cannot be read"));
    }
};

HEADLIGHT_TEST_MAIN(TestZooDialog)
#include "test_zoo_dialog.moc"
