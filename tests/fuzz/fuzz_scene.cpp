// libFuzzer target: scene JSON → Scene (parseScene, with the variant spec inside checked by
// parseVariantSpec); an accepted scene must survive sceneToJson and parsing again unchanged.
#include "fuzz_scene_vocabulary.h"
#include "fuzz_support.h"
#include "io/scene_file.h"

#include <QJsonDocument>

using namespace headlight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    io::Scene scene;
    try {
        scene = io::parseScene(std::string(reinterpret_cast<const char*>(data), size),
                               fuzz::sceneVocabulary());
    } catch (const io::SceneError&) {
        return 0;
    }
    const std::string again = QJsonDocument(io::sceneToJson(scene)).toJson().toStdString();
    HEADLIGHT_FUZZ_CHECK(io::parseScene(again, fuzz::sceneVocabulary()) == scene);
    HEADLIGHT_FUZZ_CHECK(!io::isLessonJson(again));
    return 0;
}
