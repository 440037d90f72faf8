// The Scenario value type (core/io/scenario.h): every field survives its one JSON mapping, each
// field reaches the JSON, a scenario that asks for no backend writes no `backend` key, a bad
// field gets its one-line message, and every scene and lesson shipped (resources/lessons) or
// kept as a test input (tests/fuzz/seeds) still loads and writes back the keys it was read from.
#include "error_of.h"
#include "io/scene_file.h"
#include "scene_files.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <functional>

using namespace headlight;

namespace {

// Every field away from its default.
io::Scenario everyFieldSet() {
    io::Scenario scenario;
    scenario.model = "post_ln";
    scenario.revision = "step1000";
    scenario.text = "The cat sat.";
    scenario.variant =
        QJsonDocument::fromJson(R"({"mask": {"preset": "longformer", "window": 2}})").object();
    scenario.backend = BackendKind::Vulkan;
    scenario.view = "sparsity";
    scenario.selection = {2, 3, 4, true};
    scenario.colormap = "cividis";
    scenario.sae = "saes/pre_ln";
    scenario.saeScan = "scans/jargon.json";
    scenario.saeLabels = "labels/explanations";
    return scenario;
}

io::Scenario fromJson(const QJsonObject& json) {
    io::SceneFields fields(json, "scenario", "");
    const io::Scenario scenario = io::scenarioFromJson(fields, app::sceneVocabulary());
    fields.finish();
    return scenario;
}

QJsonObject readObject(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

// Each key the file gives comes back from the mapping with the file's value.
void checkKeysKept(const QJsonObject& file, const QJsonObject& written, const QString& where) {
    for (auto it = file.begin(); it != file.end(); ++it) {
        QJsonValue back = written.value(it.key());
        if (it->isObject() && it.key() == QLatin1String("selection")) {
            QJsonObject kept = back.toObject();
            for (const QString& key : kept.keys())
                if (!it->toObject().contains(key)) kept.remove(key); // a default written out
            back = kept;
        }
        QVERIFY2(back == *it, qPrintable(where + ": " + it.key()));
    }
}

QStringList sceneAndLessonFiles() {
    QStringList files = app::builtinLessons();
    QDirIterator seeds(QStringLiteral(HEADLIGHT_SOURCE_DIR "/tests/fuzz/seeds"), {"*.json"},
                       QDir::Files, QDirIterator::Subdirectories);
    while (seeds.hasNext()) {
        const QString path = seeds.next();
        if (!path.contains("/variant_spec/")) files << path;
    }
    return files;
}
} // namespace

class TestScenario : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFieldRoundTrips() {
        const io::Scenario scenario = everyFieldSet();
        QCOMPARE(fromJson(io::scenarioToJson(scenario)), scenario);
        const std::string text = QJsonDocument(io::scenarioToJson(scenario)).toJson().toStdString();
        QCOMPARE(fromJson(QJsonDocument::fromJson(QByteArray::fromStdString(text)).object()),
                 scenario);
    }

    // A field the mapping dropped would leave the round trip equal to the default.
    void eachFieldReachesTheJson_data() {
        QTest::addColumn<int>("field");
        const char* names[] = {"model",
                               "revision",
                               "text",
                               "variant",
                               "backend",
                               "view",
                               "selection.layer",
                               "selection.head",
                               "selection.query",
                               "selection.average",
                               "colormap",
                               "sae",
                               "sae_scan",
                               "sae_labels"};
        for (int i = 0; i < int(std::size(names)); ++i)
            QTest::newRow(names[i]) << i;
    }
    void eachFieldReachesTheJson() {
        QFETCH(int, field);
        io::Scenario scenario;
        scenario.model = "rope";
        scenario.view = "heatmap";
        const io::Scenario base = scenario;
        const io::Scenario full = everyFieldSet();
        const std::function<void()> copy[] = {
            [&] { scenario.model = full.model; },
            [&] { scenario.revision = full.revision; },
            [&] { scenario.text = full.text; },
            [&] { scenario.variant = full.variant; },
            [&] { scenario.backend = full.backend; },
            [&] { scenario.view = full.view; },
            [&] { scenario.selection.layer = full.selection.layer; },
            [&] { scenario.selection.head = full.selection.head; },
            [&] { scenario.selection.query = full.selection.query; },
            [&] { scenario.selection.average = full.selection.average; },
            [&] { scenario.colormap = full.colormap; },
            [&] { scenario.sae = full.sae; },
            [&] { scenario.sae = full.sae, scenario.saeScan = full.saeScan; },
            [&] { scenario.sae = full.sae, scenario.saeLabels = full.saeLabels; },
        };
        copy[field]();
        QVERIFY(!(scenario == base));
        QCOMPARE(fromJson(io::scenarioToJson(scenario)), scenario);
    }

    void noBackendWritesNoKey() {
        io::Scenario scenario = everyFieldSet();
        scenario.backend.reset();
        QVERIFY(!io::scenarioToJson(scenario).contains("backend"));
        scenario.backend = BackendKind::Cpu;
        QCOMPARE(io::scenarioToJson(scenario).value("backend").toString(), QString("cpu"));
    }

    void badFieldsNameTheKey_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("backend")
            << R"({"model": "m", "text": "a", "view": "heatmap", "backend": "cuda"})"
            << "scenario: 'backend' is 'cuda'; known: cpu, vulkan";
        QTest::newRow("backend type")
            << R"({"model": "m", "text": "a", "view": "heatmap", "backend": 1})"
            << "scenario: 'backend' must be a string";
        QTest::newRow("empty model") << R"({"model": "", "text": "a", "view": "heatmap"})"
                                     << "scenario: 'model' is empty: name a zoo model or a "
                                        "checkpoint folder";
        QTest::newRow("colormap")
            << R"({"model": "m", "text": "a", "view": "heatmap", "colormap": "jet"})"
            << "scenario: 'colormap' is 'jet'; known: viridis, cividis";
        QTest::newRow("selection key")
            << R"({"model": "m", "text": "a", "view": "heatmap", "selection": {"row": 1}})"
            << "scenario: unknown key 'selection.row'";
        QTest::newRow("scan without an SAE")
            << R"({"model": "m", "text": "a", "view": "features", "sae_scan": "s.json"})"
            << "scenario: 'sae_scan' names a file for the SAE, but the scene has no \"sae\"";
        QTest::newRow("caption is a scene's")
            << R"({"model": "m", "text": "a", "view": "heatmap", "caption": "c"})"
            << "scenario: unknown key 'caption'";
    }
    void badFieldsNameTheKey() {
        QFETCH(QString, json);
        QFETCH(QString, message);
        const QJsonObject object = QJsonDocument::fromJson(json.toUtf8()).object();
        QCOMPARE(test::errorOf<io::SceneError>([&] { fromJson(object); }), message);
    }

    void aSceneWithABackendLoads() {
        const io::Scene scene =
            io::parseScene(R"({"model": "rope", "text": "a", "view": "heatmap", "backend": "cpu"})",
                           app::sceneVocabulary());
        QCOMPARE(scene.backend, std::optional(BackendKind::Cpu));
    }

    void existingScenesAndLessonsLoadUnchanged() {
        const QStringList files = sceneAndLessonFiles();
        QVERIFY(files.size() >= 10); // seven built-in lessons and three seeds
        for (const QString& path : files) {
            const std::string json = io::readSceneFile(path.toStdString());
            const QJsonObject file = readObject(path);
            if (io::isLessonJson(json)) {
                const io::Lesson lesson = io::parseLesson(json, app::sceneVocabulary());
                const QJsonArray steps = io::lessonToJson(lesson).value("steps").toArray();
                QCOMPARE(steps.size(), file.value("steps").toArray().size());
                for (qsizetype i = 0; i < steps.size(); ++i)
                    checkKeysKept(file.value("steps").toArray()[i].toObject(), steps[i].toObject(),
                                  path + QStringLiteral(" step %1").arg(i));
            } else {
                const io::Scene scene = io::parseScene(json, app::sceneVocabulary());
                checkKeysKept(file, io::sceneToJson(scene), path);
                QVERIFY(!scene.backend); // none of them names one
            }
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestScenario)
#include "test_scenario.moc"
