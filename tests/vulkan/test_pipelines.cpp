// Every embedded compute shader builds into a pipeline on the device, and a kernel runs with a
// checked result; buffers round-trip, and misuse is refused with a clear message.
#include <QTest>
#include <numeric>
#include <vector>

#include "backend/vulkan/buffer.h"
#include "backend/vulkan/compute_batch.h"
#include "backend/vulkan/pipeline.h"
#include "backend/vulkan/vk_error.h"
#include "shader_registry.h"
#include "vulkan_fixture.h"

using namespace headlight;

class TestPipelines : public QObject {
    Q_OBJECT
    std::unique_ptr<vk::Context> context_;

private Q_SLOTS:
    void initTestCase() { context_ = test::makeContext(); }
    void cleanupTestCase() { test::verifyNoValidationErrors(*context_); }

    void everyShaderBuildsAPipeline() {
        QVERIFY(!shaders::all().empty());
        for (const shaders::EmbeddedShader& shader : shaders::all()) {
            if (!shader.compute) continue; // the canvas' stages: tests/smoke/test_smoke_canvas_map
            vk::ComputePipeline pipeline(*context_, std::string(shader.name));
            QVERIFY2(pipeline.handle() != VK_NULL_HANDLE, shader.name.data());
            QVERIFY2(pipeline.storageBuffers() >= 1, shader.name.data());
        }
    }

    void reflectsBindings() {
        const auto* binary = shaders::find("binary");
        QVERIFY(binary);
        const vk::ShaderInterface io = vk::reflect(binary->spirv());
        QCOMPARE(io.storageBuffers, 3u);
        const uint32_t garbage[] = {1, 2, 3, 4, 5, 6};
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, vk::reflect(garbage));
    }

    void addKernelBroadcastsARow() {
        const uint32_t rows = 37, cols = 33, n = rows * cols; // odd sizes: partial workgroups
        std::vector<float> a(n), b(cols), out(n + 16, -7.0f);
        std::iota(a.begin(), a.end(), 0.5f);
        for (uint32_t i = 0; i < cols; ++i) b[i] = -0.25f * float(i);
        vk::Buffer aBuf(*context_, n * 4), bBuf(*context_, cols * 4), outBuf(*context_, (n + 16) * 4);
        aBuf.upload(std::span<const float>(a));
        bBuf.upload(std::span<const float>(b));
        outBuf.upload(std::span<const float>(out)); // guard words after n must stay untouched
        // shaders/binary.comp: workgroup 256, OP 0 (add), BMODE 1 (b's rows repeat).
        const uint32_t specialization[] = {256, 0, 1};
        vk::ComputePipeline add(*context_, "binary", specialization);
        vk::ComputeBatch batch(*context_);
        struct {
            uint32_t n, aBase, bBase, outBase, bStart, bPeriod, cols;
        } push{n, 0, 0, 0, 0, cols, 1};
        batch.dispatch(add, {&aBuf, &bBuf, &outBuf}, push, (n + 255) / 256);
        QCOMPARE(batch.dispatchCount(), 1u);
        batch.submitAndWait();
        outBuf.download(std::span<float>(out));
        for (uint32_t i = 0; i < n; ++i) QCOMPARE(out[i], a[i] + b[i % cols]);
        for (uint32_t i = n; i < n + 16; ++i) QCOMPARE(out[i], -7.0f);
    }

    void wrongBufferCountIsRefused() {
        vk::Buffer one(*context_, 64);
        vk::ComputePipeline add(*context_, "binary");
        vk::ComputeBatch batch(*context_);
        try {
            batch.dispatch(add, {&one}, uint32_t(0), 1);
            QFAIL("expected VulkanError");
        } catch (const vk::VulkanError& error) {
            QCOMPARE(QString(error.what()), QString("pipeline 'binary' takes 3 buffers, 1 given"));
        }
    }

    void oversizedBufferIsRefused() {
        const std::size_t tooBig = context_->info().maxStorageBufferRange + 4;
        try {
            vk::Buffer buffer(*context_, tooBig);
            QFAIL("expected VulkanError");
        } catch (const vk::VulkanError& error) {
            QVERIFY2(QString(error.what()).contains("storage binding limit"), error.what());
        }
        vk::Buffer small(*context_, 16);
        std::vector<float> four(8);
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, small.upload(std::span<const float>(four)));
    }

    void unknownShaderIsRefused() {
        QVERIFY_THROWS_EXCEPTION(vk::VulkanError, vk::ComputePipeline(*context_, "no_such_shader"));
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestPipelines)
#include "test_pipelines.moc"
