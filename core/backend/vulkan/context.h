#pragma once
// The compute device layer: Headlight's own VkInstance (never Qt's, so compute runs with no
// display), device selection, recorded features and limits, and validation messages counted so
// that tests can fail on them.
//
// Selection order: discrete GPU > integrated GPU > virtual GPU > CPU (lavapipe) > other. The
// environment variable HEADLIGHT_VULKAN_DEVICE or the CLI flag --vulkan-device overrides it with a
// device index (as `headlight devices` lists them) or a case-insensitive part of the device name.
// Validation layers are on in debug builds and whenever HEADLIGHT_VULKAN_VALIDATION=1.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

namespace headlight::vk {

enum class DeviceKind { Discrete, Integrated, Virtual, Cpu, Other };
const char* deviceKindName(DeviceKind kind);

struct DeviceInfo {
    uint32_t index = 0; // position in vkEnumeratePhysicalDevices
    std::string name;
    DeviceKind kind = DeviceKind::Other;
    uint32_t apiVersion = 0;
    std::string driverVersion;
    uint64_t maxStorageBufferRange = 0; // bytes one storage binding may span
    uint32_t maxComputeSharedMemory = 0;
    uint32_t maxComputeInvocations = 0;
    std::array<uint32_t, 3> maxWorkgroupSize{};
    uint32_t maxPushConstantsSize = 0;
    uint32_t subgroupSize = 0;
    uint32_t minSubgroupSize = 0; // smallest a pipeline may get (subgroup size control)
    bool subgroupArithmetic = false;
    bool subgroupShuffle = false; // subgroupShuffle in compute shaders
    bool shaderFloat16 = false;
    bool storageBuffer16Bit = false;
    bool unifiedMemory = false;  // a device-local heap that the host can map
    uint64_t deviceLocalBytes = 0; // size of the largest device-local heap
    std::string summary() const; // one line: name, kind, API, limits
};

// Device faults, forced so that every fallback path can be tested on any machine:
//   HEADLIGHT_VULKAN_FAULT=pipeline     every pipeline creation fails
//   HEADLIGHT_VULKAN_FAULT=device-lost  every submission reports VK_ERROR_DEVICE_LOST
//   HEADLIGHT_VULKAN_FAULT=hang         submissions never reach the queue, as if a shader hung
//   HEADLIGHT_VULKAN_TIMEOUT_S=N        a batch not finished after N s is a hung device (default 120)
//   HEADLIGHT_VULKAN_MEMORY_BUDGET_MB=N device allocations beyond N MiB fail as out of memory
// The budget is also a user setting: it keeps Headlight from taking a shared GPU's memory.
struct DeviceFaults {
    bool failPipelines = false;
    bool loseDevice = false;
    bool hangSubmissions = false;
    // Submits each batch for real, then gives up on it at once, as the timeout does with a batch
    // still running: the path where the device may still use what the pass would free.
    bool abandonBatches = false;
    // Why a limit at all: a shader that never ends (a driver bug, or a kernel wrong on one GPU)
    // would otherwise freeze the pass; the limit turns it into DeviceLost and the CPU fallback.
    // Generous, because one batch of a long input on a CPU driver can take tens of seconds.
    std::chrono::seconds batchTimeout{120};
    std::optional<uint64_t> memoryBudgetBytes; // none: no budget; 0 makes every allocation fail
    static DeviceFaults fromEnvironment(); // throws VulkanError on an unknown fault name
};

// Device memory Headlight can still allocate, checked before a load or a forward pass so that a
// model that cannot fit is refused with a message instead of failing halfway through.
struct MemoryBudget {
    uint64_t availableBytes = 0;
    std::string source; // what sets the figure (the setting, the extension or the heap size)
};

struct ContextOptions {
    std::string deviceSelector; // empty: HEADLIGHT_VULKAN_DEVICE, then the best device
    bool validation = false;    // forced on in debug builds and by HEADLIGHT_VULKAN_VALIDATION=1
};

// Every physical device the loader reports, with its limits. Throws VulkanError when there is no
// loader, no driver, or no device.
std::vector<DeviceInfo> listDevices();

// The device `selector` names (an index or part of a name, case-insensitive), or the preferred
// kind when `selector` is empty; nullopt when nothing matches.
std::optional<std::size_t> selectDevice(const std::vector<DeviceInfo>& devices, const std::string& selector);

// Whether any Context of this process was marked hung: its driver may still be running the
// abandoned batch, so the process must end without the libraries' exit-time destructors.
bool anyContextHung();

class Context {
public:
    // Throws VulkanError with a one-line reason when no usable device exists.
    static std::unique_ptr<Context> create(const ContextOptions& options = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    const DeviceInfo& info() const { return info_; }
    VkInstance instance() const { return instance_; }
    VkPhysicalDevice physicalDevice() const { return physical_; }
    VkDevice device() const { return device_; }
    VkQueue queue() const { return queue_; }
    uint32_t queueFamily() const { return queueFamily_; }
    VkCommandPool commandPool() const { return commandPool_; }
    bool validationEnabled() const { return messenger_ != VK_NULL_HANDLE; }

    // Index of a memory type with all `required` flags, preferring those that also have
    // `preferred`; throws when none fits `typeBits`.
    uint32_t memoryType(uint32_t typeBits, VkMemoryPropertyFlags required,
                        VkMemoryPropertyFlags preferred = 0) const;

    const DeviceFaults& faults() const { return faults_; }
    // Called when a batch outlived faults().batchTimeout: the device is abandoned at destruction.
    void markHung();
    // Whether a batch may still be running: then no buffer, pipeline, descriptor pool or command
    // buffer is destroyed (they are leaked with the device), since the device may still read
    // them; freeing a buffer under a running lavapipe batch crashes the process.
    bool hung() const { return hung_; }
    // Accounts a device allocation against the memory budget; throws OutOfDeviceMemory beyond it.
    void reserveMemory(uint64_t bytes);
    void releaseMemory(uint64_t bytes) { allocatedBytes_ -= bytes; }
    uint64_t allocatedBytes() const { return allocatedBytes_.load(); }
    // The least of: the HEADLIGHT_VULKAN_MEMORY_BUDGET_MB budget less Headlight's allocations; the
    // driver's budget for this process on the device-local heap (VK_EXT_memory_budget, which
    // allows for other programs) less the process's usage, or without that extension the heap
    // size less Headlight's allocations.
    MemoryBudget memoryBudget() const;

    // Validation-layer errors (and warnings) seen since creation.
    int validationErrorCount() const { return validationErrors_.load(); }
    std::vector<std::string> validationMessages() const;

private:
    Context() = default;
    void createInstance(bool validation);
    void pickDevice(const std::string& selector);
    void createDevice();
    static VKAPI_ATTR VkBool32 VKAPI_CALL onValidationMessage(
        VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
        const VkDebugUtilsMessengerCallbackDataEXT* data, void* self);

    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    VkPhysicalDevice physical_ = VK_NULL_HANDLE;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queueFamily_ = 0;
    VkCommandPool commandPool_ = VK_NULL_HANDLE;
    VkPhysicalDeviceMemoryProperties memory_{};
    uint32_t deviceHeap_ = 0;        // the largest device-local heap, where tensors live
    bool memoryBudgetQuery_ = false; // VK_EXT_memory_budget is enabled
    DeviceInfo info_;
    std::atomic<int> validationErrors_{0};
    DeviceFaults faults_;
    std::atomic<uint64_t> allocatedBytes_{0};
    bool hung_ = false;
    mutable std::mutex messagesMutex_;
    std::vector<std::string> messages_;
};
} // namespace headlight::vk
