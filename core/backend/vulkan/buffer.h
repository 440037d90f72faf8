#pragma once
// A storage buffer on the compute device. Where the device has unified memory (lavapipe, APUs,
// resizable BAR) the buffer is mapped and read or written directly; otherwise it is device-local
// and transfers go through a temporary staging buffer.

#include <cstddef>
#include <cstdint>
#include <span>

#include <vulkan/vulkan.h>

namespace headlight::vk {

class Context;

class Buffer {
public:
    // Throws VulkanError when `bytes` exceeds the device's per-binding limit or memory runs out.
    Buffer(Context& context, std::size_t bytes);
    ~Buffer();
    Buffer(Buffer&& other) noexcept;
    Buffer& operator=(Buffer&& other) noexcept;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    VkBuffer handle() const { return buffer_; }
    std::size_t bytes() const { return bytes_; }
    bool mapped() const { return mapped_ != nullptr; }

    void upload(std::span<const std::byte> data, std::size_t offset = 0);
    void download(std::span<std::byte> data, std::size_t offset = 0) const;

    template <typename T> void upload(std::span<const T> values, std::size_t offset = 0) {
        upload(std::as_bytes(values), offset);
    }
    template <typename T> void download(std::span<T> values, std::size_t offset = 0) const {
        download(std::as_writable_bytes(values), offset);
    }

private:
    void release();
    void checkRange(std::size_t offset, std::size_t size) const;

    Context* context_ = nullptr;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceMemory memory_ = VK_NULL_HANDLE;
    std::size_t bytes_ = 0;
    void* mapped_ = nullptr;
    uint64_t accounted_ = 0; // bytes reserved against the context's memory budget
};
} // namespace headlight::vk
