// Scene and lesson files (core/io/scene_file.h): a scene survives JSON and back unchanged, and
// malformed files get the one-line message that names the key's path.
#include "io/scene_file.h"

#include <QJsonDocument>
#include <QTest>

using namespace headlight;

namespace {
const io::SceneVocabulary kVocabulary{{"heatmap", "sparsity"}, {"viridis", "cividis"}};

QString errorOf(const std::string& json, bool lesson) {
    try {
        if (lesson)
            io::parseLesson(json, kVocabulary);
        else
            io::parseScene(json, kVocabulary);
    } catch (const io::SceneError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(accepted)");
}

const char* kScene = R"({"model": "rope", "text": "a1b2>a1", "view": "heatmap"})";
} // namespace

class TestSceneFile : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sceneRoundTrips() {
        io::Scene scene;
        scene.model = "post_ln";
        scene.text = "The cat sat.";
        scene.variant =
            QJsonDocument::fromJson(R"({"mask": {"preset": "longformer", "window": 2}})").object();
        scene.view = "sparsity";
        scene.selection = {2, 3, 4, true};
        scene.colormap = "cividis";
        scene.title = "Step";
        scene.caption = "Look at the band.";
        scene.ablation = {{1, 2, variants::AblationMode::Zero},
                          {0, 3, variants::AblationMode::Replace}};
        scene.ablationSource = "The dog sat.";
        const std::string json = QJsonDocument(io::sceneToJson(scene)).toJson().toStdString();
        QVERIFY(io::parseScene(json, kVocabulary) == scene);
        QVERIFY(!io::isLessonJson(json));
    }

    void lessonRoundTrips() {
        io::Lesson lesson{"Title", "Summary", {io::parseScene(kScene, kVocabulary)}};
        lesson.steps.push_back(lesson.steps.front());
        lesson.steps.back().caption = "Second";
        const std::string json = QJsonDocument(io::lessonToJson(lesson)).toJson().toStdString();
        QVERIFY(io::isLessonJson(json));
        QVERIFY(io::parseLesson(json, kVocabulary) == lesson);
    }

    void defaultsOfAMinimalScene() {
        const io::Scene scene = io::parseScene(kScene, kVocabulary);
        QCOMPARE(scene.selection, io::ScenarioSelection{});
        QCOMPARE(scene.colormap, std::string("viridis"));
        QVERIFY(scene.variant.isEmpty());
    }

    void malformedFilesNameTheKey_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<bool>("lesson");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << "{" << false
                                  << "scene: invalid JSON at byte 1: unterminated object";
        QTest::newRow("not object") << "[]" << false << "scene: the top level must be an object";
        QTest::newRow("missing model")
            << R"({"text": "a", "view": "heatmap"})" << false << "scene: 'model' is missing";
        QTest::newRow("unknown key")
            << R"({"model": "m", "text": "a", "view": "heatmap", "colour": 1})" << false
            << "scene: unknown key 'colour'";
        QTest::newRow("unknown view") << R"({"model": "m", "text": "a", "view": "pie"})" << false
                                      << "scene: 'view' is 'pie'; known: heatmap, sparsity";
        QTest::newRow("layer type")
            << R"({"model": "m", "text": "a", "view": "heatmap", "selection": {"layer": "2"}})"
            << false << "scene: 'selection.layer' must be an integer from 0 to 1000000";
        QTest::newRow("bad variant")
            << R"({"model": "m", "text": "a", "view": "heatmap", "variant": {"prior": {"evry": 2}}})"
            << false
            << "scene: 'variant' is not a valid variant spec (variant spec: unknown key "
               "'prior.evry')";
        QTest::newRow("ablation entry")
            << R"({"model": "m", "text": "a", "view": "heatmap", "ablation": [{"layer": 0, "head": 1, "mode": "half"}]})"
            << false << "scene: 'ablation[0].mode' is 'half'; known: zero, mean, replace";
        QTest::newRow("ablation key")
            << R"({"model": "m", "text": "a", "view": "heatmap", "ablation": [{"layer": 0, "heads": 1}]})"
            << false << "scene: unknown key 'ablation[0].heads'";
        QTest::newRow("replace without source")
            << R"({"model": "m", "text": "a", "view": "heatmap", "ablation": [{"layer": 0, "head": 1, "mode": "replace"}]})"
            << false
            << "scene: 'ablation_source' is missing: a replace ablation takes its head outputs "
               "from this text";
        QTest::newRow("no steps") << R"({"title": "t", "steps": []})" << true
                                  << "lesson: 'steps' is empty: a lesson needs at least one scene";
        QTest::newRow("step type")
            << R"({"title": "t", "steps": [3]})" << true << "lesson: 'steps[0]' must be an object";
        QTest::newRow("step key")
            << R"({"title": "t", "steps": [{"model": "m", "text": "a", "view": "heatmap"}, {"model": "m", "text": "a", "view": "heatmap", "selection": {"head": -1}}]})"
            << true << "lesson: 'steps[1].selection.head' must be an integer from 0 to 1000000";
        QTest::newRow("step caption")
            << R"({"title": "t", "steps": [{"model": "m", "text": "a", "view": "heatmap", "caption": 7}]})"
            << true << "lesson: 'steps[0].caption' must be a string";
        QTest::newRow("lesson title") << R"({"steps": []})" << true << "lesson: 'title' is missing";
    }
    void malformedFilesNameTheKey() {
        QFETCH(QString, json);
        QFETCH(bool, lesson);
        QFETCH(QString, message);
        const QString error = errorOf(json.toStdString(), lesson);
        QCOMPARE(error, message);
        QVERIFY(!error.contains('\n'));
    }

    void unknownLessonKeyIsRefused() {
        QCOMPARE(errorOf(std::string(R"({"title": "t", "steps": [)") + kScene + R"(], "extra": 1})",
                         true),
                 QString("lesson: unknown key 'extra'"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestSceneFile)
#include "test_scene_file.moc"
