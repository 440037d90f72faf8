// libFuzzer target: lesson JSON → Lesson (parseLesson: every step a scene); an accepted lesson
// must survive lessonToJson and parsing again unchanged, with at least one step.
#include "fuzz_scene_vocabulary.h"
#include "fuzz_support.h"
#include "io/scene_file.h"

#include <QJsonDocument>

using namespace headlight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    io::Lesson lesson;
    try {
        lesson = io::parseLesson(std::string(reinterpret_cast<const char*>(data), size),
                                 fuzz::sceneVocabulary());
    } catch (const io::SceneError&) {
        return 0;
    }
    HEADLIGHT_FUZZ_CHECK(!lesson.steps.empty() &&
                         lesson.steps.size() <= std::size_t(io::kMaxLessonSteps));
    const std::string again = QJsonDocument(io::lessonToJson(lesson)).toJson().toStdString();
    HEADLIGHT_FUZZ_CHECK(io::isLessonJson(again));
    HEADLIGHT_FUZZ_CHECK(io::parseLesson(again, fuzz::sceneVocabulary()) == lesson);
    return 0;
}
