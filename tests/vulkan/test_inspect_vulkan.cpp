// `headlight inspect --backend vulkan` on lavapipe reproduces the golden tensors of every
// architecture, for text and for ids, and says which backend ran.
#include <QTemporaryDir>
#include <QTest>

#include "cli_runner.h"
#include "golden.h"

using namespace headlight;

class TestInspectVulkan : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void vulkanDumpMatchesGoldens_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenCases();
        QVERIFY(!cases.empty());
        // One text case and the padded ids case per model keep this suite short on lavapipe.
        for (std::size_t i = 0; i < cases.size(); ++i)
            if (cases[i].name() == "punctuation" || cases[i].name() == "padding")
                QTest::newRow(qPrintable(cases[i].model + "/" + cases[i].name())) << int(i);
    }

    void vulkanDumpMatchesGoldens() {
        QFETCH(int, index);
        const test::GoldenCase golden = test::goldenCases()[std::size_t(index)];
        const QString dump = dir_.filePath(golden.model + "_" + golden.name() + ".safetensors");
        const auto run =
            test::runHeadlight(QStringList{"inspect", "--model", golden.folder, "--backend",
                                           "vulkan", "--dump", dump, "--json"} +
                               test::inspectInputArgs(golden));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(summary["backend"].toString(), QString("vulkan"));
        QVERIFY(summary["device"].toString().contains("llvmpipe"));

        const io::SafetensorsFile ours(dump.toStdString()), expected(golden.tensorsPath().toStdString());
        QCOMPARE(ours.loadI64("input_ids"), expected.loadI64("input_ids"));
        QString where;
        for (const char* name : {"attentions", "last_hidden_state"})
            QVERIFY2(test::maxAbsDiff(ours.loadF32(name), expected.loadF32(name), &where) <= test::kGoldenTolerance,
                     qPrintable(QString(name) + " " + where));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestInspectVulkan)
#include "test_inspect_vulkan.moc"
