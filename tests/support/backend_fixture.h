#pragma once
// The tests of tests/backends/ write each case once: the class takes a BackendKind and ends with
// HEADLIGHT_TEST_ON_EACH_BACKEND(Class), which registers it twice (test_registry.h), as test_x
// on the CPU backend and as test_vulkan_x on Vulkan. BackendFixture gives it the backend: the
// CPU's, or Vulkan's on a context with validation on, whose messages fail the test that caused
// them (vulkan_fixture.h).

#include "backend/backend.h"
#include "test_registry.h"
#include "vulkan_fixture.h"

#include <memory>

namespace headlight::test {

class BackendFixture {
public:
    explicit BackendFixture(BackendKind kind)
        : kind_(kind) {}

    // From initTestCase: a Vulkan context fails the test when there is no device.
    void open() {
        if (kind_ == BackendKind::Cpu) {
            backend_ = makeCpuBackend();
            return;
        }
        context_ = makeContext();
        backend_ = makeVulkanBackend(context_);
    }

    // From cleanupTestCase: the backend is released before the validation messages are read.
    void close() {
        backend_.reset();
        if (context_) verifyNoValidationErrors(*context_);
    }

    Backend& backend() { return *backend_; }
    // A second backend of the same kind (on the same Vulkan context), owned by the caller.
    std::unique_ptr<Backend> another() const {
        return kind_ == BackendKind::Cpu ? makeCpuBackend() : makeVulkanBackend(context_);
    }
    // As `headlight --backend` spells it.
    const char* cliName() const { return backendName(kind_); }

private:
    BackendKind kind_;
    std::shared_ptr<vk::Context> context_;
    std::unique_ptr<Backend> backend_;
};

// "test_x" -> "test_vulkan_x", as tests/CMakeLists.txt names the Vulkan run.
inline std::string vulkanTwinOf(const std::string& name) {
    return "test_vulkan_" + name.substr(std::string("test_").size());
}

template <typename Class> bool registerOnEachBackend(const char* file) {
    const std::string name = testNameOf(file);
    registerTest({name, TestApp::Core, [] { return std::make_unique<Class>(BackendKind::Cpu); }});
    return registerTest({vulkanTwinOf(name), TestApp::Core,
                         [] { return std::make_unique<Class>(BackendKind::Vulkan); }});
}
} // namespace headlight::test

#define HEADLIGHT_TEST_ON_EACH_BACKEND(Class)                                                      \
    namespace {                                                                                    \
    [[maybe_unused]] const bool headlightRegistered##Class =                                       \
        ::headlight::test::registerOnEachBackend<Class>(__FILE__);                                 \
    }
