#include "pipeline.h"

#include "context.h"
#include "shader_registry.h"
#include "vk_error.h"

#include <map>
#include <set>

namespace headlight::vk {
namespace {

// SPIR-V opcodes and enumerants used by the reflection below (SPIR-V 1.5 specification, §3).
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kDecorationBinding = 33;
constexpr uint32_t kDecorationDescriptorSet = 34;
constexpr uint32_t kStorageClassUniform = 2;
constexpr uint32_t kStorageClassStorageBuffer = 12;
} // namespace

ShaderInterface reflect(std::span<const uint32_t> spirv) {
    if (spirv.size() < 5 || spirv[0] != kMagic) throw VulkanError("not a SPIR-V module");
    std::map<uint32_t, uint32_t> bindingOf, setOf;
    std::set<uint32_t> bufferVariables;
    ShaderInterface result;
    for (std::size_t at = 5; at < spirv.size();) {
        const uint32_t words = spirv[at] >> 16, opcode = spirv[at] & 0xffff;
        if (words == 0 || at + words > spirv.size())
            throw VulkanError("truncated SPIR-V instruction");
        const uint32_t* op = &spirv[at];
        if (opcode == kOpDecorate && words >= 4 && op[2] == kDecorationBinding)
            bindingOf[op[1]] = op[3];
        if (opcode == kOpDecorate && words >= 4 && op[2] == kDecorationDescriptorSet)
            setOf[op[1]] = op[3];
        if (opcode == kOpVariable && words >= 4 &&
            (op[3] == kStorageClassStorageBuffer || op[3] == kStorageClassUniform))
            bufferVariables.insert(op[2]);
        at += words;
    }
    std::set<uint32_t> bindings;
    for (uint32_t variable : bufferVariables) {
        if (setOf.count(variable) && setOf[variable] != 0)
            throw VulkanError("shader uses a descriptor set other than 0");
        if (bindingOf.count(variable)) bindings.insert(bindingOf[variable]);
    }
    result.storageBuffers = static_cast<uint32_t>(bindings.size());
    if (!bindings.empty() && *bindings.rbegin() != bindings.size() - 1)
        throw VulkanError("shader storage bindings are not numbered 0..n-1");
    return result;
}

ComputePipeline::ComputePipeline(Context& context, const std::string& shaderName,
                                 std::span<const uint32_t> specialization)
    : context_(context)
    , name_(shaderName) {
    if (context.faults().failPipelines)
        throw VulkanError("creating pipeline '" + shaderName +
                              "' failed: VK_ERROR_INITIALIZATION_FAILED (forced by "
                              "HEADLIGHT_VULKAN_FAULT=pipeline)",
                          VK_ERROR_INITIALIZATION_FAILED);
    const shaders::EmbeddedShader* shader = shaders::find(shaderName);
    if (!shader) throw VulkanError("no embedded shader named '" + shaderName + "'");
    interface_ = reflect(shader->spirv());
    const VkDevice device = context.device();

    std::vector<VkDescriptorSetLayoutBinding> bindings(interface_.storageBuffers);
    for (uint32_t i = 0; i < bindings.size(); ++i)
        bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT,
                       nullptr};
    VkDescriptorSetLayoutCreateInfo setInfo{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    setInfo.bindingCount = static_cast<uint32_t>(bindings.size());
    setInfo.pBindings = bindings.data();
    check(vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &setLayout_),
          "vkCreateDescriptorSetLayout");

    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
    VkPipelineLayoutCreateInfo layoutInfo{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layoutInfo.setLayoutCount = 1;
    layoutInfo.pSetLayouts = &setLayout_;
    layoutInfo.pushConstantRangeCount = 1;
    layoutInfo.pPushConstantRanges = &push;

    VkShaderModuleCreateInfo moduleInfo{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    moduleInfo.codeSize = shader->wordCount * sizeof(uint32_t);
    moduleInfo.pCode = shader->words;
    VkShaderModule module = VK_NULL_HANDLE;

    std::vector<VkSpecializationMapEntry> entries(specialization.size());
    for (uint32_t i = 0; i < entries.size(); ++i)
        entries[i] = {i, i * 4u, 4u};
    const VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(),
                                    specialization.size_bytes(), specialization.data()};
    try {
        check(vkCreatePipelineLayout(device, &layoutInfo, nullptr, &layout_),
              "vkCreatePipelineLayout");
        check(vkCreateShaderModule(device, &moduleInfo, nullptr, &module), "vkCreateShaderModule");
        VkComputePipelineCreateInfo pipelineInfo{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        pipelineInfo.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        pipelineInfo.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        pipelineInfo.stage.module = module;
        pipelineInfo.stage.pName = "main";
        pipelineInfo.stage.pSpecializationInfo = entries.empty() ? nullptr : &spec;
        pipelineInfo.layout = layout_;
        check(
            vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipelineInfo, nullptr, &pipeline_),
            ("creating pipeline '" + shaderName + "'").c_str());
    } catch (...) {
        vkDestroyShaderModule(device, module, nullptr);
        vkDestroyPipelineLayout(device, layout_, nullptr);
        vkDestroyDescriptorSetLayout(device, setLayout_, nullptr);
        throw;
    }
    vkDestroyShaderModule(device, module, nullptr);
}

ComputePipeline::~ComputePipeline() {
    if (context_.hung()) return; // an abandoned batch may still run it (Context::hung)
    const VkDevice device = context_.device();
    vkDestroyPipeline(device, pipeline_, nullptr);
    vkDestroyPipelineLayout(device, layout_, nullptr);
    vkDestroyDescriptorSetLayout(device, setLayout_, nullptr);
}
} // namespace headlight::vk
