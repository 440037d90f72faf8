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
class TensorFile;
} // namespace io

// Bytes the process may still allocate, or nothing when it cannot be known (not Linux, no
// /proc). Throws ModelError when HEADLIGHT_MEMORY_LIMIT_MB is set but is not a number of MB.
std::optional<double> availableMemoryBytes();

// "38.7 GB", "512.0 MB", "12.0 kB", "100 bytes" (decimal units, as disk and RAM are sold).
std::string formatBytes(double bytes);

// The checkpoint's tensors as f32: every element × 4 bytes, whatever the stored dtype.
double checkpointF32Bytes(const io::Checkpoint& checkpoint);

// Where a load puts the checkpoint's tensors, read from the headers alone: the 2-D F32, F16 and
// BF16 tensors of safetensors files stay in their mapped file in the stored dtype
// (io/stored_matrix.h), untied LM heads included; the rest (norms, biases, torch archives, and
// the matrices `spec`'s family declares widened, ModelFamily::widenedMatrices: the embedding
// tables of BERT, RoBERTa and DistilBERT) is widened to f32. Exact for the Llama and encoder
// layouts; where another layout widens a matrix (GPT-2's transposed Conv1D weights, the
// embedding tables of GPT-2 and OPT) that matrix's f32 copies are missing from `widened`.
struct WeightBytes {
    double parameters = 0.0; // every stored element
    double mapped = 0.0;     // the stored bytes of the tensors left in the mapping
    double widened = 0.0;    // the other tensors as f32
};
WeightBytes weightBytes(const io::Checkpoint& checkpoint, const ModelSpec& spec);

// Host memory a load needs: the mapped tensors' pages and the widened tensors, held twice when
// the backend keeps its tensors in host memory (the CPU backend), since the host copy and the
// backend's are both alive while the weights are uploaded.
double loadBytes(const WeightBytes& weights, bool backendInHostMemory);

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

// The memory plan `headlight info` prints and the window shows before a long pass: the
// weights, a pass of `tokens` tokens with `capture`, and whether their sum fits what is
// available (it fits when availability cannot be known).
struct MemoryPlan {
    WeightBytes weights;
    double load = 0.0; // loadBytes
    int64_t tokens = 0;
    ForwardEstimate forward;
    std::optional<double> available;
    double peak() const { return load + forward.total(); }
    bool fits() const { return !available || peak() <= *available; }
};
MemoryPlan planMemory(const io::Checkpoint& checkpoint, const ModelSpec& spec, int64_t tokens,
                      const CaptureRequest& capture, bool backendInHostMemory);
// "peak 18.4 GB for 512 tokens (16.1 GB mapped weights, 2.3 GB for the pass) of 24.0 GB
// available": the plan in one line, for messages and dialogs.
std::string describePlan(const MemoryPlan& plan);

// Both throw ModelError when the estimate exceeds availableMemoryBytes(); the message says how
// much is needed, how much is available and what to reduce.
void checkLoadBudget(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                     bool backendInHostMemory);
// Why an SAE's (or transcoder's) weights file does not fit, widened to f32 as the SAE readers
// hold it (io/sae_folder.h), in the memory available: "FILE: the SAE's weights need 4.8 GB as f32
// but 2.1 GB is available: …". Nothing when it fits or availability cannot be known. Read from
// the header alone, so that a 262k-wide SAE is refused before gigabytes are widened.
std::optional<std::string> saeLoadRefusal(const io::TensorFile& weights);
void checkForwardBudget(const ModelSpec& spec, int64_t tokens, const CaptureRequest& capture,
                        bool backendInHostMemory);

// [SECTION] device memory (Vulkan backend)
// The device holds the weights and, while a pass is recorded as one submission, every tensor the
// pass allocates. Its free memory is a number the backend reports (vk::Context::memoryBudget);
// these functions only compare, so they need no device.

// Whether `backend` keeps F16 / BF16 weights in 16 bits on its device (the Vulkan backend on a
// device with storageBuffer16BitAccess, unless told to widen them). Defined beside the Vulkan
// backend (vulkan_backend.cpp), so that the file parsers this file serves build without it.
bool keepsWeights16Bit(const Backend& backend);

// The weights as the Vulkan backend uploads them, plus one staging copy of the largest tensor,
// alive while it is uploaded. With `weights16Bit` the tensors a load leaves mapped (weightBytes)
// take their stored bytes, rounded up to whole 32-bit words, and the others their f32 bytes (so
// it inherits weightBytes' precision); without, every tensor is f32.
double deviceLoadBytes(const io::Checkpoint& checkpoint, const ModelSpec& spec, bool weights16Bit);

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
void checkDeviceLoadBudget(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                           const DeviceMemory& device, bool weights16Bit);
void checkDeviceForwardBudget(const ModelSpec& spec, int64_t tokens, const CaptureRequest& capture,
                              const DeviceMemory& device);
} // namespace headlight
