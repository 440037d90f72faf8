#pragma once
// One executable per test folder (tests/CMakeLists.txt): every test file registers its Qt Test
// class here under its file name, and suite_main.cpp runs the class named on the command line
// (`suite_unit test_tokenizers [Qt Test options]`). Why: 46 executables each linking the whole
// app took most of the sanitizer build; one link per suite does not.
//
// Where a standalone test ended with QTEST_MAIN(Class), QTEST_GUILESS_MAIN(Class) or
// QTEST_APPLESS_MAIN(Class), it ends with HEADLIGHT_TEST_MAIN(Class),
// HEADLIGHT_TEST_GUILESS_MAIN(Class) or HEADLIGHT_TEST_APPLESS_MAIN(Class): the same application
// object is made before the class, as Qt's macros do.

#include <QObject>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace headlight::test {

// The application object a test needs: QApplication, QCoreApplication or none.
enum class TestApp { Widgets, Core, None };

struct RegisteredTest {
    std::string name; // the ctest name: the file name without .cpp
    TestApp app;
    std::function<std::unique_ptr<QObject>()> make;
};

inline std::vector<RegisteredTest>& registeredTests() {
    static std::vector<RegisteredTest> tests;
    return tests;
}

inline bool registerTest(RegisteredTest test) {
    registeredTests().push_back(std::move(test));
    return true;
}

// "tests/unit/test_x.cpp" -> "test_x".
inline std::string testNameOf(const std::string& file) {
    const std::string base = file.substr(file.find_last_of('/') + 1);
    return base.substr(0, base.rfind('.'));
}

template <typename Class> bool registerTestClass(const char* file, TestApp app) {
    return registerTest({testNameOf(file), app, [] { return std::make_unique<Class>(); }});
}
} // namespace headlight::test

// Runs while the executable starts, before main; the anonymous namespace keeps the flag local.
#define HEADLIGHT_REGISTER_TEST(Class, App)                                                        \
    namespace {                                                                                    \
    [[maybe_unused]] const bool headlightRegistered##Class =                                       \
        ::headlight::test::registerTestClass<Class>(__FILE__, ::headlight::test::TestApp::App);    \
    }

#define HEADLIGHT_TEST_MAIN(Class) HEADLIGHT_REGISTER_TEST(Class, Widgets)
#define HEADLIGHT_TEST_GUILESS_MAIN(Class) HEADLIGHT_REGISTER_TEST(Class, Core)
#define HEADLIGHT_TEST_APPLESS_MAIN(Class) HEADLIGHT_REGISTER_TEST(Class, None)
