#pragma once
// Records many dispatches into one command buffer, with a compute-to-compute memory barrier
// between dependent dispatches, then submits it once and waits on a fence. One forward pass is one
// batch: on lavapipe a submit costs ~100 µs while a dispatch inside a batch costs ~40 µs.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include <vulkan/vulkan.h>

namespace headlight::vk {

class Buffer;
class ComputePipeline;
class Context;

class ComputeBatch {
public:
    explicit ComputeBatch(Context& context);
    ~ComputeBatch();
    ComputeBatch(const ComputeBatch&) = delete;
    ComputeBatch& operator=(const ComputeBatch&) = delete;

    // Binds `buffers` to bindings 0..n-1 (n must equal the pipeline's count), pushes `push`
    // (at most 128 bytes) and dispatches `groups` workgroups.
    void dispatch(const ComputePipeline& pipeline, std::span<const Buffer* const> buffers,
                  std::span<const std::byte> push, uint32_t groupsX, uint32_t groupsY = 1,
                  uint32_t groupsZ = 1);
    void dispatch(const ComputePipeline& pipeline, std::initializer_list<const Buffer*> buffers,
                  std::span<const std::byte> push, uint32_t groupsX, uint32_t groupsY = 1,
                  uint32_t groupsZ = 1) {
        dispatch(pipeline, std::span<const Buffer* const>(buffers.begin(), buffers.size()), push,
                 groupsX, groupsY, groupsZ);
    }
    template <typename Push>
    void dispatch(const ComputePipeline& pipeline, std::initializer_list<const Buffer*> buffers,
                  const Push& push, uint32_t groupsX, uint32_t groupsY = 1, uint32_t groupsZ = 1) {
        dispatch(pipeline, buffers, std::as_bytes(std::span<const Push>(&push, 1)), groupsX, groupsY, groupsZ);
    }

    // Makes every earlier write visible to every later dispatch.
    void barrier();

    // Submits what was recorded and waits; throws DeviceLost / OutOfDeviceMemory / VulkanError.
    // The batch can then be recorded again.
    void submitAndWait();
    uint32_t dispatchCount() const { return dispatches_; }

private:
    void begin();
    VkDescriptorSet allocateSet(VkDescriptorSetLayout layout);

    Context& context_;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> pools_;
    uint32_t setsInPool_ = 0;
    uint32_t dispatches_ = 0;
    bool recording_ = false;
};
} // namespace headlight::vk
