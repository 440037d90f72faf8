#pragma once
// Memory checks made before the two steps that can need more memory than the machine has:
// loading a checkpoint's weights (every tensor widened to f32) and a forward pass whose capture
// grows with the square of the sequence length (L · H · T² · 4 bytes per captured kind). Past
// the available memory the kernel's OOM killer ends the process without a word; refusing first,
// with a message that says what to reduce, is the only way the user learns why.
//
// Available memory is MemAvailable from /proc/meminfo, lowered to what the process's cgroup
// (v2) still allows, or HEADLIGHT_MEMORY_LIMIT_MB when set (tests use it; a user may too, to
// keep Headlight inside a budget). Estimates are in doubles: they are compared, never allocated,
// and a hostile config's sizes must not overflow an integer on the way.

#include "backend/backend.h"
#include "model/model_spec.h"
#include "model/trace.h"

#include <cstdint>
#include <optional>
#include <string>

namespace headlight {

namespace io {
class Checkpoint;
}

// Bytes the process may still allocate, or nothing when it cannot be known (not Linux, no
// /proc). Throws ModelError when HEADLIGHT_MEMORY_LIMIT_MB is set but is not a number of MB.
std::optional<double> availableMemoryBytes();

// "38.7 GB", "512.0 MB", "12.0 kB", "100 bytes" (decimal units, as disk and RAM are sold).
std::string formatBytes(double bytes);

// The checkpoint's tensors as f32: every element × 4 bytes, whatever the stored dtype.
double checkpointF32Bytes(const io::Checkpoint& checkpoint);

// Host memory a load needs: the f32 weights read from the checkpoint, plus the backend's own
// copy when the backend keeps its tensors in host memory (the CPU backend), since both are alive
// while the weights are uploaded.
double loadBytes(double checkpointF32, bool backendInHostMemory);

struct ForwardEstimate {
    double capture = 0.0;    // the captured probabilities and scores, backend and trace copies
    double hidden = 0.0;     // hidden states kept for the trace (and the last hidden state)
    double workingSet = 0.0; // one layer's activations, the largest live at once
    double total() const { return capture + hidden + workingSet; }
};

// Host memory one forward pass of `tokens` tokens needs with `capture`. The backend's capture
// tensors hold every head of a captured layer ([H, T, T]); the trace keeps the requested heads.
// A backend whose tensors live in device memory (Vulkan) adds only the trace's copies here.
ForwardEstimate estimateForward(const ModelSpec& spec, int64_t tokens,
                                const CaptureRequest& capture, bool backendInHostMemory);

// Both throw ModelError when the estimate exceeds availableMemoryBytes(); the message says how
// much is needed, how much is available and what to reduce.
void checkLoadBudget(const io::Checkpoint& checkpoint, bool backendInHostMemory);
void checkForwardBudget(const ModelSpec& spec, int64_t tokens, const CaptureRequest& capture,
                        bool backendInHostMemory);

// [SECTION] device memory (Vulkan backend)
// The device holds the weights and, while a pass is recorded as one submission, every tensor the
// pass allocates. Its free memory is a number the backend reports (vk::Context::memoryBudget);
// these functions only compare, so they need no device.

// The weights as f32 (the Vulkan backend widens f16 and bf16 on upload) plus one staging copy of
// the largest tensor, alive while it is uploaded.
double deviceLoadBytes(const io::Checkpoint& checkpoint);

struct DeviceForwardEstimate {
    double capture = 0.0;     // every head of each captured layer and kind, plus one download copy
    double activations = 0.0; // every tensor of the pass: all stay alive until it runs
    double total() const { return capture + activations; }
};

DeviceForwardEstimate estimateDeviceForward(const ModelSpec& spec, int64_t tokens,
                                            const CaptureRequest& capture);

// Both throw vk::OutOfDeviceMemory when the estimate exceeds `device.available`, before anything
// is allocated, so that callers fall back to the CPU backend as they do when an allocation fails;
// the message says how much is needed, how much is available and what to reduce.
void checkDeviceLoadBudget(const io::Checkpoint& checkpoint, const DeviceMemory& device);
void checkDeviceForwardBudget(const ModelSpec& spec, int64_t tokens, const CaptureRequest& capture,
                              const DeviceMemory& device);
} // namespace headlight
