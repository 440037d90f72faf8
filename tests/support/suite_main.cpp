// The main of every suite executable: `suite_<folder> TEST [Qt Test options]` runs the class that
// the file TEST.cpp registered (test_registry.h), after making the application object it asked
// for, as QTEST_MAIN and its variants would. With no TEST, or an unknown one, it lists the tests.
#include "test_registry.h"

#include <QApplication>
#include <QCoreApplication>
#include <QHashFunctions>
#include <QTest>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

using headlight::test::RegisteredTest;
using headlight::test::TestApp;

namespace {

int listTests(const char* program) {
    std::fprintf(stderr, "usage: %s TEST [Qt Test options]\ntests:\n", program);
    auto tests = headlight::test::registeredTests();
    std::sort(tests.begin(), tests.end(),
              [](const RegisteredTest& a, const RegisteredTest& b) { return a.name < b.name; });
    for (const RegisteredTest& test : tests)
        std::fprintf(stderr, "  %s\n", test.name.c_str());
    return 2;
}

int runTest(const RegisteredTest& test, int argc, char** argv) {
    std::optional<QApplication> widgets;
    std::optional<QCoreApplication> core;
    if (test.app == TestApp::Widgets) widgets.emplace(argc, argv);
    if (test.app == TestApp::Core) core.emplace(argc, argv);
    if (widgets) widgets->setAttribute(Qt::AA_Use96Dpi, true);
    if (core) core->setAttribute(Qt::AA_Use96Dpi, true);
    const std::unique_ptr<QObject> object = test.make();
    return QTest::qExec(object.get(), argc, argv);
}
} // namespace

int main(int argc, char** argv) {
    // Why, as headlight's main does: Qt's writers emit some parts of a file in QHash order, and
    // a test compares what its window exported with `headlight reproduce`, whose seed is fixed.
    QHashSeed::setDeterministicGlobalSeed();
    if (argc < 2) return listTests(argv[0]);
    const auto& tests = headlight::test::registeredTests();
    const auto found = std::find_if(tests.begin(), tests.end(), [&](const RegisteredTest& test) {
        return std::strcmp(test.name.c_str(), argv[1]) == 0;
    });
    if (found == tests.end()) return listTests(argv[0]);
    // Qt Test sees the program name and the options after TEST, as a standalone test would.
    argv[1] = argv[0];
    return runTest(*found, argc - 1, argv + 1);
}
