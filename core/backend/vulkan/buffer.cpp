#include "buffer.h"

#include "context.h"
#include "vk_error.h"

#include <cstring>
#include <string>
#include <utility>

namespace headlight::vk {
namespace {

struct RawBuffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void* mapped = nullptr;
    uint64_t accounted = 0; // bytes reserved against the context's memory budget
};

RawBuffer allocate(Context& context, std::size_t bytes, VkBufferUsageFlags usage,
                   VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
    RawBuffer raw;
    VkBufferCreateInfo create{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    create.size = bytes;
    create.usage = usage;
    create.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(context.device(), &create, nullptr, &raw.buffer), "vkCreateBuffer");

    VkMemoryRequirements needs;
    vkGetBufferMemoryRequirements(context.device(), raw.buffer, &needs);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = needs.size;
    try {
        alloc.memoryTypeIndex = context.memoryType(needs.memoryTypeBits, required, preferred);
        context.reserveMemory(needs.size);
        raw.accounted = needs.size;
        check(vkAllocateMemory(context.device(), &alloc, nullptr, &raw.memory), "vkAllocateMemory");
    } catch (...) {
        context.releaseMemory(raw.accounted);
        vkDestroyBuffer(context.device(), raw.buffer, nullptr);
        throw;
    }
    vkBindBufferMemory(context.device(), raw.buffer, raw.memory, 0);
    return raw;
}

void destroy(Context& context, RawBuffer& raw) {
    context.releaseMemory(raw.accounted);
    if (context.hung()) { // the abandoned batch may still use it (Context::hung)
        raw = {};
        return;
    }
    if (raw.mapped) vkUnmapMemory(context.device(), raw.memory);
    vkDestroyBuffer(context.device(), raw.buffer, nullptr);
    vkFreeMemory(context.device(), raw.memory, nullptr);
    raw = {};
}

// Records `record` into a one-time command buffer, submits it and waits.
template <typename Record> void submitNow(Context& context, Record&& record) {
    VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = context.commandPool();
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    check(vkAllocateCommandBuffers(context.device(), &alloc, &cmd), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cmd, &begin);
    record(cmd);
    vkEndCommandBuffer(cmd);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    const VkResult result = vkQueueSubmit(context.queue(), 1, &submit, VK_NULL_HANDLE);
    const VkResult idle = result == VK_SUCCESS ? vkQueueWaitIdle(context.queue()) : result;
    vkFreeCommandBuffers(context.device(), context.commandPool(), 1, &cmd);
    check(idle, "buffer transfer");
}
} // namespace

Buffer::Buffer(Context& context, std::size_t bytes)
    : context_(&context)
    , bytes_(bytes) {
    if (bytes == 0) throw VulkanError("a device buffer cannot be empty");
    if (bytes > context.info().maxStorageBufferRange)
        throw VulkanError("buffer of " + std::to_string(bytes) + " bytes exceeds the device's " +
                          std::to_string(context.info().maxStorageBufferRange) +
                          "-byte storage binding limit");
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    const VkMemoryPropertyFlags hostAccess =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags required = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    if (context.info().unifiedMemory) required |= hostAccess;
    RawBuffer raw = allocate(context, bytes, usage, required, 0);
    buffer_ = raw.buffer;
    memory_ = raw.memory;
    accounted_ = raw.accounted;
    if (context.info().unifiedMemory)
        check(vkMapMemory(context.device(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
}

Buffer::~Buffer() {
    release();
}

Buffer::Buffer(Buffer&& other) noexcept {
    *this = std::move(other);
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
    if (this != &other) {
        release();
        context_ = std::exchange(other.context_, nullptr);
        buffer_ = std::exchange(other.buffer_, VK_NULL_HANDLE);
        memory_ = std::exchange(other.memory_, VK_NULL_HANDLE);
        bytes_ = std::exchange(other.bytes_, 0);
        mapped_ = std::exchange(other.mapped_, nullptr);
        accounted_ = std::exchange(other.accounted_, 0);
    }
    return *this;
}

void Buffer::release() {
    if (!context_) return;
    RawBuffer raw{buffer_, memory_, mapped_, accounted_};
    if (buffer_) destroy(*context_, raw);
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    mapped_ = nullptr;
    accounted_ = 0;
}

void Buffer::checkRange(std::size_t offset, std::size_t size) const {
    if (offset > bytes_ || size > bytes_ - offset)
        throw VulkanError("buffer access of " + std::to_string(size) + " bytes at offset " +
                          std::to_string(offset) + " is outside a " + std::to_string(bytes_) +
                          "-byte buffer");
}

void Buffer::upload(std::span<const std::byte> data, std::size_t offset) {
    checkRange(offset, data.size());
    if (data.empty()) return;
    if (mapped_) {
        std::memcpy(static_cast<std::byte*>(mapped_) + offset, data.data(), data.size());
        return;
    }
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    RawBuffer staging = allocate(*context_, data.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, host, 0);
    try {
        check(vkMapMemory(context_->device(), staging.memory, 0, VK_WHOLE_SIZE, 0, &staging.mapped),
              "vkMapMemory");
        std::memcpy(staging.mapped, data.data(), data.size());
        submitNow(*context_, [&](VkCommandBuffer cmd) {
            const VkBufferCopy region{0, offset, data.size()};
            vkCmdCopyBuffer(cmd, staging.buffer, buffer_, 1, &region);
        });
    } catch (...) {
        destroy(*context_, staging);
        throw;
    }
    destroy(*context_, staging);
}

void Buffer::download(std::span<std::byte> data, std::size_t offset) const {
    checkRange(offset, data.size());
    if (data.empty()) return;
    if (mapped_) {
        std::memcpy(data.data(), static_cast<const std::byte*>(mapped_) + offset, data.size());
        return;
    }
    const VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    RawBuffer staging = allocate(*context_, data.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, host,
                                 VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    try {
        submitNow(*context_, [&](VkCommandBuffer cmd) {
            const VkBufferCopy region{offset, 0, data.size()};
            vkCmdCopyBuffer(cmd, buffer_, staging.buffer, 1, &region);
        });
        check(vkMapMemory(context_->device(), staging.memory, 0, VK_WHOLE_SIZE, 0, &staging.mapped),
              "vkMapMemory");
        std::memcpy(data.data(), staging.mapped, data.size());
    } catch (...) {
        destroy(*context_, staging);
        throw;
    }
    destroy(*context_, staging);
}
} // namespace headlight::vk
