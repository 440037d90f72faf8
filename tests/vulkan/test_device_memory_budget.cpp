// The device side of the memory checks on lavapipe: the context reports what Headlight may still
// allocate (the heap less its own allocations, or a HEADLIGHT_VULKAN_MEMORY_BUDGET_MB budget),
// and with a tiny budget a pass that cannot fit is refused by checkDeviceForwardBudget before any
// allocation, with the message that says what to reduce; run anyway, the same pass fails halfway
// on the device, which is what the check spares the user.
#include "backend/backend.h"
#include "backend/vulkan/vk_error.h"
#include "error_of.h"
#include "golden.h"
#include "model/memory_budget.h"
#include "model/transformer.h"
#include "vulkan_fixture.h"

#include <QTest>

using namespace headlight;

namespace {

constexpr const char* kBudget = "HEADLIGHT_VULKAN_MEMORY_BUDGET_MB";
constexpr uint64_t kMiB = 1 << 20;

DeviceMemory deviceMemoryOf(const vk::Context& context) {
    const vk::MemoryBudget budget = context.memoryBudget();
    return {double(budget.availableBytes), budget.source};
}

ModelInput idsOfLength(int tokens) {
    ModelInput input;
    input.ids.assign(std::size_t(tokens), 5);
    return input;
}
} // namespace

class TestDeviceMemoryBudget : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { qunsetenv(kBudget); }
    void cleanup() { qunsetenv(kBudget); }

    // lavapipe has no VK_EXT_memory_budget: the heap size less what Headlight holds.
    void budgetIsTheHeapLessOurAllocations() {
        const std::shared_ptr<vk::Context> context = test::makeContext();
        const vk::MemoryBudget before = context->memoryBudget();
        QCOMPARE(before.source, std::string("the device-local heap size"));
        QCOMPARE(before.availableBytes,
                 context->info().deviceLocalBytes - context->allocatedBytes());
        const auto backend = makeVulkanBackend(context);
        const DeviceTensor tensor = backend->allocate({256, 1024}); // 1 MiB
        QVERIFY(context->allocatedBytes() >= kMiB);
        QCOMPARE(context->memoryBudget().availableBytes,
                 context->info().deviceLocalBytes - context->allocatedBytes());
        test::verifyNoValidationErrors(*context);
    }

    void settingCapsTheBudget() {
        qputenv(kBudget, "1");
        const std::shared_ptr<vk::Context> context = test::makeContext();
        const vk::MemoryBudget budget = context->memoryBudget();
        QCOMPARE(budget.source, std::string("limit set by HEADLIGHT_VULKAN_MEMORY_BUDGET_MB"));
        QCOMPARE(budget.availableBytes, kMiB);
        qputenv(kBudget, "1000000000"); // above the heap: the heap is what limits
        QCOMPARE(test::makeContext()->memoryBudget().source,
                 std::string("the device-local heap size"));
    }

    void tinyBudgetRefusesThePassBeforeItStarts() {
        qputenv(kBudget, "1");
        const std::shared_ptr<vk::Context> context = test::makeContext();
        const auto backend = makeVulkanBackend(context);
        const std::string folder = (test::goldenRoot() + "/bert").toStdString();
        checkDeviceLoadBudget(io::Checkpoint(folder), loadModelConfig(folder),
                              deviceMemoryOf(*context), keepsWeights16Bit(*backend)); // 256 kB fits
        const auto model = loadModel(folder, *backend);
        const ModelSpec& spec = model->spec();

        checkDeviceForwardBudget(spec, 4, {}, deviceMemoryOf(*context));
        QVERIFY(!model->forward(idsOfLength(4)).layers.front().probabilities.empty());

        const uint64_t held = context->allocatedBytes();
        const DeviceMemory left = deviceMemoryOf(*context);
        QCOMPARE(left.available, double(kMiB - held));
        const QString need =
            QString::fromStdString(formatBytes(estimateDeviceForward(spec, 512, {}).total()));
        const QString refusal = test::errorOf<vk::OutOfDeviceMemory>(
            [&] { checkDeviceForwardBudget(spec, 512, {}, left); });
        QCOMPARE(refusal,
                 "capturing 2 layers × 4 heads at 512 tokens needs " + need +
                     " of device memory but " +
                     QString::fromStdString(formatBytes(left.available)) +
                     " is available (limit set by HEADLIGHT_VULKAN_MEMORY_BUDGET_MB): capture "
                     "fewer layers or shorten the text");
        QCOMPARE(context->allocatedBytes(), held); // refused before anything was allocated

        // The model runs the same check: the pass is refused with that message before it starts.
        const QString failure =
            test::errorOf<vk::OutOfDeviceMemory>([&] { model->forward(idsOfLength(512)); });
        QVERIFY2(failure.startsWith("capturing 2 layers × 4 heads at 512 tokens needs "), qPrintable(failure));
        QCOMPARE(context->allocatedBytes(), held);
        test::verifyNoValidationErrors(*context);
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestDeviceMemoryBudget)
#include "test_device_memory_budget.moc"
