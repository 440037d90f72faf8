#include "compute_batch.h"

#include "buffer.h"
#include "context.h"
#include "pipeline.h"
#include "vk_error.h"

#include <chrono>
#include <string>

namespace headlight::vk {
namespace {
constexpr uint32_t kSetsPerPool = 256;
constexpr uint32_t kBuffersPerSet = 8;
} // namespace

ComputeBatch::ComputeBatch(Context& context)
    : context_(context) {
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = context.commandPool();
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(context.device(), &alloc, &cmd_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(context.device(), &fence, nullptr, &fence_), "vkCreateFence");
}

ComputeBatch::~ComputeBatch() {
    if (context_.hung()) return; // its command buffer may still be running (Context::hung)
    const VkDevice device = context_.device();
    if (recording_) vkEndCommandBuffer(cmd_);
    for (VkDescriptorPool pool : pools_)
        vkDestroyDescriptorPool(device, pool, nullptr);
    vkDestroyFence(device, fence_, nullptr);
    vkFreeCommandBuffers(device, context_.commandPool(), 1, &cmd_);
}

void ComputeBatch::begin() {
    if (recording_) return;
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd_, &info), "vkBeginCommandBuffer");
    recording_ = true;
}

VkDescriptorSet ComputeBatch::allocateSet(VkDescriptorSetLayout layout) {
    if (pools_.empty() || setsInPool_ == kSetsPerPool) {
        const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                        kSetsPerPool * kBuffersPerSet};
        VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        info.maxSets = kSetsPerPool;
        info.poolSizeCount = 1;
        info.pPoolSizes = &size;
        VkDescriptorPool pool = VK_NULL_HANDLE;
        check(vkCreateDescriptorPool(context_.device(), &info, nullptr, &pool),
              "vkCreateDescriptorPool");
        pools_.push_back(pool);
        setsInPool_ = 0;
    }
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pools_.back();
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(vkAllocateDescriptorSets(context_.device(), &alloc, &set), "vkAllocateDescriptorSets");
    ++setsInPool_;
    return set;
}

void ComputeBatch::dispatch(const ComputePipeline& pipeline, std::span<const Buffer* const> buffers,
                            std::span<const std::byte> push, uint32_t groupsX, uint32_t groupsY,
                            uint32_t groupsZ) {
    if (buffers.size() != pipeline.storageBuffers() || buffers.size() > kBuffersPerSet)
        throw VulkanError("pipeline '" + pipeline.name() + "' takes " +
                          std::to_string(pipeline.storageBuffers()) + " buffers, " +
                          std::to_string(buffers.size()) + " given");
    if (push.size() > kPushConstantBytes) throw VulkanError("push constants exceed 128 bytes");
    begin();
    const VkDescriptorSet set = allocateSet(pipeline.setLayout());
    std::vector<VkDescriptorBufferInfo> infos;
    for (const Buffer* buffer : buffers)
        infos.push_back({buffer->handle(), 0, VK_WHOLE_SIZE});
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (uint32_t i = 0; i < writes.size(); ++i) {
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(context_.device(), static_cast<uint32_t>(writes.size()), writes.data(),
                           0, nullptr);
    vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.handle());
    vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set, 0,
                            nullptr);
    if (!push.empty())
        vkCmdPushConstants(cmd_, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(push.size()), push.data());
    vkCmdDispatch(cmd_, groupsX, groupsY, groupsZ);
    ++dispatches_;
}

void ComputeBatch::barrier() {
    begin();
    VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    memory.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    memory.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &memory, 0, nullptr, 0,
                         nullptr);
}

void ComputeBatch::submitAndWait() {
    if (!recording_) return;
    // Why: results are read by the host right after, so make shader writes host-visible.
    VkMemoryBarrier toHost{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    toHost.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &toHost,
                         0, nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    recording_ = false;
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd_;
    if (context_.faults().loseDevice) {
        vkResetCommandBuffer(cmd_, 0);
        throw DeviceLost("vkQueueSubmit failed: VK_ERROR_DEVICE_LOST (forced by "
                         "HEADLIGHT_VULKAN_FAULT=device-lost)",
                         VK_ERROR_DEVICE_LOST);
    }
    if (!context_.faults().hangSubmissions)
        check(vkQueueSubmit(context_.queue(), 1, &submit, fence_), "vkQueueSubmit");
    if (context_.faults().abandonBatches) {
        context_.markHung();
        throw DeviceLost("the batch of " + std::to_string(dispatches_) +
                             " dispatches was abandoned while running (forced by "
                             "HEADLIGHT_VULKAN_FAULT=abandon)",
                         VK_TIMEOUT);
    }
    const auto timeout = std::chrono::nanoseconds(context_.faults().batchTimeout).count();
    const VkResult waited =
        vkWaitForFences(context_.device(), 1, &fence_, VK_TRUE, uint64_t(timeout));
    if (waited == VK_TIMEOUT) {
        // A forced hang submitted nothing, so that device can still be destroyed (and
        // LeakSanitizer sees it freed); a real one may still be running the batch.
        if (!context_.faults().hangSubmissions) context_.markHung();
        throw DeviceLost(
            "the device did not finish " + std::to_string(dispatches_) + " dispatches within " +
                std::to_string(context_.faults().batchTimeout.count()) +
                " s (a hung shader or driver; HEADLIGHT_VULKAN_TIMEOUT_S sets the limit)",
            VK_TIMEOUT);
    }
    check(waited, "vkWaitForFences");
    vkResetFences(context_.device(), 1, &fence_);
    vkResetCommandBuffer(cmd_, 0);
    for (VkDescriptorPool pool : pools_)
        vkResetDescriptorPool(context_.device(), pool, 0);
    setsInPool_ = 0;
    if (pools_.size() > 1) {
        for (std::size_t i = 1; i < pools_.size(); ++i)
            vkDestroyDescriptorPool(context_.device(), pools_[i], nullptr);
        pools_.resize(1);
    }
    dispatches_ = 0;
}
} // namespace headlight::vk
