#pragma once
// Shared by the Vulkan tests: one Context per test program, and a check that the validation
// layers reported no error, so that a validation message fails the test that caused it.

#include <QTest>
#include <memory>

#include "backend/vulkan/context.h"

namespace headlight::test {

inline std::unique_ptr<vk::Context> makeContext() {
    vk::ContextOptions options;
    options.validation = true;
    return vk::Context::create(options); // throws, failing the test, when there is no device
}

inline void verifyNoValidationErrors(const vk::Context& context) {
    for (const std::string& message : context.validationMessages()) qWarning("%s", message.c_str());
    QCOMPARE(context.validationErrorCount(), 0);
}
} // namespace headlight::test
