#pragma once
// A compute pipeline made from an embedded shader (shaders/*.comp). Its descriptor layout is read
// from the SPIR-V itself (every storage buffer in set 0, by binding number), so adding a shader
// needs no table to keep in step. Every pipeline gets the same 128-byte push-constant range, the
// minimum any Vulkan device guarantees, for its shapes and scalars.

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

namespace headlight::vk {

class Context;

constexpr uint32_t kPushConstantBytes = 128;

struct ShaderInterface {
    uint32_t storageBuffers = 0; // bindings 0..storageBuffers-1 in descriptor set 0
};

// Reads the storage-buffer bindings of a SPIR-V module; throws
// VulkanError on a malformed module or bindings that are not 0..n-1.
ShaderInterface reflect(std::span<const uint32_t> spirv);

class ComputePipeline {
public:
    // `specialization[i]` becomes constant_id i (e.g. tile sizes, tuned per device).
    ComputePipeline(Context& context, const std::string& shaderName,
                    std::span<const uint32_t> specialization = {});
    ~ComputePipeline();
    ComputePipeline(const ComputePipeline&) = delete;
    ComputePipeline& operator=(const ComputePipeline&) = delete;

    const std::string& name() const { return name_; }
    uint32_t storageBuffers() const { return interface_.storageBuffers; }
    VkPipeline handle() const { return pipeline_; }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout setLayout() const { return setLayout_; }

private:
    Context& context_;
    std::string name_;
    ShaderInterface interface_;
    VkDescriptorSetLayout setLayout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
};
} // namespace headlight::vk
