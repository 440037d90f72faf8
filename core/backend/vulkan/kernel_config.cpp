#include "kernel_config.h"

#include "context.h"

#include <algorithm>
#include <bit>

namespace headlight::vk {

KernelConfig kernelConfigFor(const DeviceInfo& device) {
    KernelConfig config;
    // Whole subgroups per workgroup: the matmul's cooperative loads need every lane present.
    const uint32_t subgroup = std::max(1u, device.subgroupSize);
    config.matmulWorkgroup = std::max(config.matmulWorkgroup, subgroup);
    config.attentionWorkgroup = std::max(config.attentionWorkgroup, subgroup);
    config.matmulLoadLanes = std::min(config.matmulLoadLanes, std::max(1u, device.minSubgroupSize));
    const uint32_t limit = std::max(1u, device.maxComputeInvocations);
    config.elementwiseWorkgroup = std::min(config.elementwiseWorkgroup, limit);
    config.rowWorkgroup = std::min(config.rowWorkgroup, limit);
    config.scanWorkgroup = std::min(config.scanWorkgroup, limit);
    return config;
}

uint32_t matmulTileMFor(const KernelConfig& config, int64_t rows) {
    if (rows >= int64_t(config.matmulTileM)) return config.matmulTileM;
    return std::min(config.matmulTileM, std::bit_ceil(uint32_t(std::max<int64_t>(rows, 1))));
}
} // namespace headlight::vk
