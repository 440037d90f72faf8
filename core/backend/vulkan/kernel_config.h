#pragma once
// Workgroup and tile sizes of the compute kernels, chosen per device and passed as
// specialization constants, so that tuning for a GPU is a change here and not in the shaders.

#include <cstdint>

namespace headlight::vk {

struct DeviceInfo;

// Defaults measured on lavapipe (2 cores; tests/bench/bench_vulkan_matmul): TM 16 × TN 4 with
// vec4 loads beat 8×4, 16×2, 16×8 and 32×2 on both BERT-base shapes. GPUs are untuned.
struct KernelConfig {
    uint32_t elementwiseWorkgroup = 256; // activation, binary, map, rope, gather, copies, scatter
    uint32_t rowWorkgroup = 128;         // norms, reduce_rows, softmax: one workgroup per row
    uint32_t scanWorkgroup = 64;         // causal linear attention: output columns per workgroup
    uint32_t attentionWorkgroup = 64;    // keys per tile, one per invocation
    uint32_t matmulWorkgroup = 64;       // invocations sharing the same TM rows of x
    uint32_t matmulTileM = 16;           // rows per invocation (fewer when M is small)
    uint32_t matmulTileN = 4;            // columns per invocation
    uint32_t matmulLoadLanes = 8;        // lanes loading x together: ≤ the smallest subgroup
};

KernelConfig kernelConfigFor(const DeviceInfo& device);

// Rows per matmul invocation for an M-row product: the configured tile, or fewer for short
// inputs (a single token's M = 1 would otherwise compute 15 discarded rows).
uint32_t matmulTileMFor(const KernelConfig& config, int64_t rows);
} // namespace headlight::vk
