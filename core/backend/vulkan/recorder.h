#pragma once
// Recorder: the Vulkan backend's command stream. Ops record dispatches into one ComputeBatch and
// run when the host needs a result (download, finish). It adds what a batch of many ops needs:
//  - barriers only where a dispatch touches a buffer that an earlier dispatch since the last
//    barrier wrote (read after write, write after write) or read (write after read);
//  - keeping alive every buffer the pending commands use, so that a temporary tensor freed by
//    the model code between recording and submission cannot free memory the device will read.

#include "backend/vulkan/compute_batch.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <vector>

namespace headlight::vk {

class Buffer;
class ComputePipeline;
class Context;

struct Binding {
    const Buffer* buffer;
    bool written = false;
};

class Recorder {
public:
    explicit Recorder(Context& context)
        : batch_(context) {}

    template <typename Push>
    void dispatch(const ComputePipeline& pipeline, std::span<const Binding> bindings,
                  const Push& push, uint32_t groupsX, uint32_t groupsY = 1, uint32_t groupsZ = 1) {
        static_assert(sizeof(Push) <= 128, "push constants are limited to 128 bytes");
        dispatchBytes(pipeline, bindings, std::as_bytes(std::span<const Push>(&push, 1)), groupsX,
                      groupsY, groupsZ);
    }

    // Holds `owner` until the pending commands have run.
    void keepAlive(std::shared_ptr<const void> owner) { alive_.push_back(std::move(owner)); }

    bool pending() const { return batch_.dispatchCount() > 0; }
    // Runs what was recorded and waits; VulkanError (DeviceLost, OutOfDeviceMemory) propagates,
    // leaving the recorder empty.
    void submit();

private:
    void dispatchBytes(const ComputePipeline& pipeline, std::span<const Binding> bindings,
                       std::span<const std::byte> push, uint32_t groupsX, uint32_t groupsY,
                       uint32_t groupsZ);
    bool hazard(std::span<const Binding> bindings) const;
    void reset();

    ComputeBatch batch_;
    std::set<const Buffer*> readSinceBarrier_, writtenSinceBarrier_;
    std::vector<std::shared_ptr<const void>> alive_;
};
} // namespace headlight::vk
