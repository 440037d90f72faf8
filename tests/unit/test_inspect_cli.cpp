// `headlight inspect` end to end on the golden checkpoints: text is tokenized as Hugging Face does
// and ids are taken as given, the dump holds the golden tensors within 1e-4, and bad input gets a
// one-line message with a non-zero exit.
#include "cli_runner.h"
#include "golden.h"
#include "zoo_golden.h"

#include <QTemporaryDir>
#include <QTest>

using namespace headlight;

class TestInspectCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private Q_SLOTS:
    void dumpMatchesGoldens_data() {
        QTest::addColumn<int>("index");
        const auto cases = test::goldenCases();
        QVERIFY(!cases.empty());
        for (std::size_t i = 0; i < cases.size(); ++i)
            QTest::newRow(qPrintable(cases[i].model + "/" + cases[i].name())) << int(i);
    }

    void dumpMatchesGoldens() {
        QFETCH(int, index);
        const test::GoldenCase golden = test::goldenCases()[std::size_t(index)];
        const QString dump = dir_.filePath(golden.model + "_" + golden.name() + ".safetensors");
        const auto run = test::runHeadlight(
            QStringList{"inspect", "--model", golden.folder, "--backend", "cpu", "--dump", dump} +
            test::inspectInputArgs(golden));
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));

        const io::SafetensorsFile ours(dump.toStdString()), expected(golden.tensorsPath().toStdString());
        QCOMPARE(ours.loadI64("input_ids"), expected.loadI64("input_ids"));
        const auto mask = expected.loadI64("attention_mask");
        const int64_t tokens = int64_t(mask.size());
        auto validQuery = [&](std::size_t i) { return mask[i % std::size_t(tokens)] != 0; };
        QString where;
        for (const char* name : {"attentions", "last_hidden_state"})
            QVERIFY2(test::maxAbsDiff(ours.loadF32(name), expected.loadF32(name), &where) <= test::kGoldenTolerance,
                     qPrintable(QString(name) + " " + where));
        for (const char* name : {"entropy", "jsd_adjacent"})
            QVERIFY2(test::maxAbsDiff(ours.loadF32(name), expected.loadF32(name), validQuery, &where) <=
                         test::kGoldenTolerance,
                     qPrintable(QString(name) + " " + where));
    }

    // A funnel's dump: its pooled maps as computed (layer{l}.attention [H, T_q, T_k]), the merge
    // map, and attentions [L, H, T, T] holding them at token resolution.
    void dumpsAFunnelsPooledMaps() {
        const auto cases = test::zooGoldenCases();
        const auto golden =
            std::find_if(cases.begin(), cases.end(), [](const test::ZooGoldenCase& c) {
                return c.name() == "funnel_encoder_2x2";
            });
        QVERIFY(golden != cases.end());
        QStringList ids;
        for (int32_t id : golden->input().ids)
            ids << QString::number(id);
        const QString dump = dir_.filePath("funnel.safetensors");
        const auto run = test::runHeadlight({"inspect", "--model", golden->folder(), "--backend",
                                             "cpu", "--ids", ids.join(','), "--dump", dump});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const io::SafetensorsFile ours(dump.toStdString()),
            expected(golden->tensorsPath().toStdString());
        const Tensor merge = expected.loadF32("funnel_merge");
        QCOMPARE(test::maxAbsDiff(ours.loadF32("funnel_merge"), merge), 0.0);
        const Tensor attentions = ours.loadF32("attentions");
        const int64_t tokens = int64_t(ids.size()), block = 4 * tokens * tokens;
        QCOMPARE(attentions.shape(), (std::vector<int64_t>{4, 4, tokens, tokens}));
        for (int64_t l = 0; l < 4; ++l) {
            const std::string name = "layer" + std::to_string(l) + ".attention";
            const Tensor map = expected.loadF32(name);
            if (l >= 2)
                QVERIFY(test::maxAbsDiff(ours.loadF32(name), map) <= test::kGoldenTolerance);
            const Tensor perToken({4, tokens, tokens},
                                  {attentions.values().begin() + l * block,
                                   attentions.values().begin() + (l + 1) * block});
            const Tensor expectedPerToken = l >= 2 ? tokenResolution(map, merge) : map;
            QVERIFY(test::maxAbsDiff(perToken, expectedPerToken) <= test::kGoldenTolerance);
        }
    }

    void jsonSummaryDescribesTheRun() {
        const auto run = test::runHeadlight({"inspect", "--model", test::goldenRoot() + "/bert", "--text",
                                             "Hello, world!", "--json", "--repeat", "3", "--backend", "cpu"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(summary["architecture"].toString(), QString("bert"));
        QCOMPARE(summary["backend"].toString(), QString("cpu"));
        QCOMPARE(summary["forward_ms"].toArray().size(), 3);
        QCOMPARE(summary["tokens"].toArray().first().toString(), QString("[CLS]"));
        const int t = summary["ids"].toArray().size();
        QCOMPARE(summary["shapes"].toObject()["attentions"].toArray(),
                 QJsonArray({summary["layers"].toInt(), summary["heads"].toInt(), t, t}));
    }

    void badInputGetsOneLine_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString bert = test::goldenRoot() + "/bert";
        QTest::newRow("no model") << QStringList{"inspect", "--text", "x", "--json"} << "--model is required";
        QTest::newRow("missing folder") << QStringList{"inspect", "--model", "/nonexistent/model", "--ids", "1",
                                                       "--json"}
                                        << "/nonexistent/model";
        QTest::newRow("both inputs") << QStringList{"inspect", "--model", bert, "--text", "a", "--ids", "1", "--json"}
                                     << "give exactly one of --text and --ids";
        QTest::newRow("empty text") << QStringList{"inspect", "--model", bert, "--text", "", "--json"}
                                    << "--text is empty";
        QTest::newRow("id out of vocab") << QStringList{"inspect", "--model", bert, "--ids", "2,999999", "--json"}
                                         << "token id 999999 is outside the vocabulary";
        QTest::newRow("not an id") << QStringList{"inspect", "--model", bert, "--ids", "2,x", "--json"}
                                   << "--ids: 'x' is not an integer";
        QTest::newRow("bad backend") << QStringList{"inspect", "--model", bert, "--ids", "2", "--backend", "tpu",
                                                    "--json"}
                                     << "--backend must be 'cpu' or 'vulkan'";
        QTest::newRow("unknown flag") << QStringList{"inspect", "--model", bert, "--frobnicate"}
                                      << "unknown argument '--frobnicate'";
        QTest::newRow("no output") << QStringList{"inspect", "--model", bert, "--ids", "2"}
                                   << "nothing to do: give --dump FILE and/or --json";
        QStringList longIds;
        for (int i = 0; i < 600; ++i) longIds << "5";
        QTest::newRow("too long") << QStringList{"inspect", "--model", bert, "--ids", longIds.join(','), "--json"}
                                  << "shorten the text";
    }

    void badInputGetsOneLine() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const auto run = test::runHeadlight(args);
        QVERIFY(run.exitCode != 0);
        const QString reason = test::refusalReason(run, "inspect");
        QVERIFY2(reason.contains(message), qPrintable(run.err));
        QVERIFY2(!reason.trimmed().contains('\n'), qPrintable(run.err));
    }

    void unwritableDumpLeavesNothing() {
        const QString target = dir_.filePath("no/such/dir/out.safetensors");
        const auto run = test::runHeadlight({"inspect", "--model", test::goldenRoot() + "/bert", "--ids", "2,3",
                                             "--dump", target});
        QVERIFY(run.exitCode != 0);
        QVERIFY2(run.err.contains(target), qPrintable(run.err));
        QVERIFY(!QFile::exists(target));
    }
};

QTEST_GUILESS_MAIN(TestInspectCli)
#include "test_inspect_cli.moc"
