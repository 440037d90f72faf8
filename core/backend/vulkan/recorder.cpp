#include "recorder.h"

#include "pipeline.h"

namespace headlight::vk {

bool Recorder::hazard(std::span<const Binding> bindings) const {
    for (const Binding& b : bindings) {
        if (writtenSinceBarrier_.count(b.buffer)) return true;
        if (b.written && readSinceBarrier_.count(b.buffer)) return true;
    }
    return false;
}

void Recorder::dispatchBytes(const ComputePipeline& pipeline, std::span<const Binding> bindings,
                             std::span<const std::byte> push, uint32_t groupsX, uint32_t groupsY,
                             uint32_t groupsZ) {
    if (groupsX == 0 || groupsY == 0 || groupsZ == 0) return;
    if (hazard(bindings)) {
        batch_.barrier();
        readSinceBarrier_.clear();
        writtenSinceBarrier_.clear();
    }
    std::vector<const Buffer*> buffers;
    for (const Binding& b : bindings) {
        buffers.push_back(b.buffer);
        (b.written ? writtenSinceBarrier_ : readSinceBarrier_).insert(b.buffer);
    }
    batch_.dispatch(pipeline, buffers, push, groupsX, groupsY, groupsZ);
}

void Recorder::reset() {
    readSinceBarrier_.clear();
    writtenSinceBarrier_.clear();
    alive_.clear();
}

void Recorder::submit() {
    try {
        batch_.submitAndWait();
    } catch (...) {
        reset();
        throw;
    }
    reset();
}
} // namespace headlight::vk
