#include "context.h"

#include <atomic>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "vk_error.h"

namespace headlight::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool envFlag(const char* name) {
    const char* value = std::getenv(name);
    return value && std::strcmp(value, "0") != 0 && *value;
}

bool validationWanted(bool requested) {
#ifndef NDEBUG
    requested = true;
#endif
    return requested || envFlag("HEADLIGHT_VULKAN_VALIDATION");
}

bool hasLayer(const char* layer) {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    return std::any_of(layers.begin(), layers.end(),
                       [&](const VkLayerProperties& p) { return std::strcmp(p.layerName, layer) == 0; });
}

DeviceKind kindOf(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return DeviceKind::Discrete;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return DeviceKind::Integrated;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return DeviceKind::Virtual;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return DeviceKind::Cpu;
    default: return DeviceKind::Other;
    }
}

int preference(DeviceKind kind) { return 4 - static_cast<int>(kind); }

std::string versionString(uint32_t v) {
    return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
           "." + std::to_string(VK_API_VERSION_PATCH(v));
}

bool hasDeviceExtension(VkPhysicalDevice device, const char* name) {
    uint32_t count = 0;
    vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
    std::vector<VkExtensionProperties> extensions(count);
    vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
    return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
    });
}

DeviceInfo describe(VkPhysicalDevice device, uint32_t index) {
    VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sizeControl{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
    subgroup.pNext = &driver;
    // Why: kernels that share loads across a subgroup must not assume more lanes than the
    // smallest subgroup a driver may pick (Intel picks 8, 16 or 32 per pipeline).
    if (hasDeviceExtension(device, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)) driver.pNext = &sizeControl;
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &subgroup;
    vkGetPhysicalDeviceProperties2(device, &props);

    VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    features11.pNext = &features12;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.pNext = &features11;
    vkGetPhysicalDeviceFeatures2(device, &features);

    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(device, &memory);

    const VkPhysicalDeviceLimits& limits = props.properties.limits;
    DeviceInfo info;
    info.index = index;
    info.name = props.properties.deviceName;
    info.kind = kindOf(props.properties.deviceType);
    info.apiVersion = props.properties.apiVersion;
    info.driverVersion = std::string(driver.driverName) + " " + driver.driverInfo;
    info.maxStorageBufferRange = limits.maxStorageBufferRange;
    info.maxComputeSharedMemory = limits.maxComputeSharedMemorySize;
    info.maxComputeInvocations = limits.maxComputeWorkGroupInvocations;
    std::copy_n(limits.maxComputeWorkGroupSize, 3, info.maxWorkgroupSize.begin());
    info.maxPushConstantsSize = limits.maxPushConstantsSize;
    info.subgroupSize = subgroup.subgroupSize;
    info.minSubgroupSize = sizeControl.minSubgroupSize ? sizeControl.minSubgroupSize
                                                       : subgroup.subgroupSize;
    info.subgroupShuffle = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                          (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    info.subgroupArithmetic = (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                              (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    info.shaderFloat16 = features12.shaderFloat16;
    info.storageBuffer16Bit = features11.storageBuffer16BitAccess;
    for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
        if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            info.deviceLocalBytes = std::max<uint64_t>(info.deviceLocalBytes, memory.memoryHeaps[i].size);
    // Why only integrated and CPU devices: a discrete GPU with resizable BAR also offers a
    // device-local, host-visible type, but host reads through the PCIe BAR are uncached and
    // slow, so there tensors live in plain device memory and move by staging copies.
    const VkMemoryPropertyFlags unified =
        VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    const bool sharesHostMemory = info.kind == DeviceKind::Integrated || info.kind == DeviceKind::Cpu;
    for (uint32_t i = 0; i < memory.memoryTypeCount && sharesHostMemory; ++i)
        if ((memory.memoryTypes[i].propertyFlags & unified) == unified) info.unifiedMemory = true;
    return info;
}

VkInstance makeInstance(const std::vector<const char*>& layers, const std::vector<const char*>& extensions) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "Headlight";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo create{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    create.pApplicationInfo = &app;
    create.enabledLayerCount = static_cast<uint32_t>(layers.size());
    create.ppEnabledLayerNames = layers.data();
    create.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    create.ppEnabledExtensionNames = extensions.data();
    VkInstance instance = VK_NULL_HANDLE;
    const VkResult result = vkCreateInstance(&create, nullptr, &instance);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
        throw VulkanError("no Vulkan driver is installed (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)", result);
    check(result, "vkCreateInstance");
    return instance;
}

std::vector<VkPhysicalDevice> physicalDevices(VkInstance instance) {
    uint32_t count = 0;
    check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
    std::vector<VkPhysicalDevice> devices(count);
    check(vkEnumeratePhysicalDevices(instance, &count, devices.data()), "vkEnumeratePhysicalDevices");
    if (devices.empty()) throw VulkanError("no Vulkan device found");
    return devices;
}

std::string lowercase(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

} // namespace

const char* deviceKindName(DeviceKind kind) {
    switch (kind) {
    case DeviceKind::Discrete: return "discrete GPU";
    case DeviceKind::Integrated: return "integrated GPU";
    case DeviceKind::Virtual: return "virtual GPU";
    case DeviceKind::Cpu: return "CPU";
    case DeviceKind::Other: break;
    }
    return "other";
}

std::string DeviceInfo::summary() const {
    std::ostringstream out;
    out << name << " (" << deviceKindName(kind) << ", Vulkan " << versionString(apiVersion)
        << ", subgroup " << subgroupSize << ", shared " << maxComputeSharedMemory / 1024 << " KiB, binding "
        << maxStorageBufferRange / (1024 * 1024) << " MiB, push " << maxPushConstantsSize << " B"
        << (unifiedMemory ? ", unified memory" : "") << ")";
    return out.str();
}

std::optional<std::size_t> selectDevice(const std::vector<DeviceInfo>& devices, const std::string& selector) {
    if (devices.empty()) return std::nullopt;
    if (selector.empty()) {
        const auto best = std::max_element(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
            return preference(a.kind) < preference(b.kind);
        });
        return static_cast<std::size_t>(best - devices.begin());
    }
    for (std::size_t i = 0; i < devices.size(); ++i)
        if (std::to_string(devices[i].index) == selector ||
            lowercase(devices[i].name).find(lowercase(selector)) != std::string::npos)
            return i;
    return std::nullopt;
}

std::vector<DeviceInfo> listDevices() {
    VkInstance instance = makeInstance({}, {});
    std::vector<DeviceInfo> infos;
    try {
        const auto devices = physicalDevices(instance);
        for (uint32_t i = 0; i < devices.size(); ++i) infos.push_back(describe(devices[i], i));
    } catch (...) {
        vkDestroyInstance(instance, nullptr);
        throw;
    }
    vkDestroyInstance(instance, nullptr);
    return infos;
}

DeviceFaults DeviceFaults::fromEnvironment() {
    DeviceFaults faults;
    const std::string fault = std::getenv("HEADLIGHT_VULKAN_FAULT") ? std::getenv("HEADLIGHT_VULKAN_FAULT") : "";
    if (fault == "pipeline") faults.failPipelines = true;
    else if (fault == "device-lost") faults.loseDevice = true;
    else if (fault == "hang") faults.hangSubmissions = true;
    else if (fault == "abandon") faults.abandonBatches = true;
    else if (!fault.empty())
        throw VulkanError("HEADLIGHT_VULKAN_FAULT must be 'pipeline', 'device-lost', 'hang' or 'abandon', not '" +
                          fault + "'");
    if (const char* timeout = std::getenv("HEADLIGHT_VULKAN_TIMEOUT_S")) {
        char* end = nullptr;
        const unsigned long seconds = std::strtoul(timeout, &end, 10);
        if (end == timeout || *end || seconds == 0)
            throw VulkanError("HEADLIGHT_VULKAN_TIMEOUT_S must be a whole number of seconds, at least 1");
        faults.batchTimeout = std::chrono::seconds(seconds);
    }
    if (const char* budget = std::getenv("HEADLIGHT_VULKAN_MEMORY_BUDGET_MB")) {
        char* end = nullptr;
        const unsigned long long megabytes = std::strtoull(budget, &end, 10);
        if (end == budget || *end) throw VulkanError("HEADLIGHT_VULKAN_MEMORY_BUDGET_MB must be a whole number");
        faults.memoryBudgetBytes = uint64_t(megabytes) << 20;
    }
    return faults;
}

void Context::reserveMemory(uint64_t bytes) {
    const uint64_t after = allocatedBytes_ += bytes;
    if (faults_.memoryBudgetBytes && after > *faults_.memoryBudgetBytes) {
        allocatedBytes_ -= bytes;
        throw OutOfDeviceMemory("allocating " + std::to_string(bytes) + " bytes would exceed the device memory budget of " +
                                    std::to_string(*faults_.memoryBudgetBytes >> 20) + " MiB",
                                VK_ERROR_OUT_OF_DEVICE_MEMORY);
    }
}

MemoryBudget Context::memoryBudget() const {
    const uint64_t ours = allocatedBytes_.load();
    const uint64_t heapSize = memory_.memoryHeaps[deviceHeap_].size;
    MemoryBudget budget{heapSize - std::min(ours, heapSize), "the device-local heap size"};
    if (memoryBudgetQuery_) {
        VkPhysicalDeviceMemoryBudgetPropertiesEXT reported{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 properties{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
        properties.pNext = &reported;
        vkGetPhysicalDeviceMemoryProperties2(physical_, &properties);
        const uint64_t limit = reported.heapBudget[deviceHeap_],
                       used = reported.heapUsage[deviceHeap_];
        budget = {limit - std::min(used, limit), "the driver's budget (VK_EXT_memory_budget)"};
    }
    if (faults_.memoryBudgetBytes) {
        const uint64_t limit = *faults_.memoryBudgetBytes;
        const uint64_t left = limit - std::min(ours, limit);
        if (left <= budget.availableBytes)
            budget = {left, "limit set by HEADLIGHT_VULKAN_MEMORY_BUDGET_MB"};
    }
    return budget;
}

std::unique_ptr<Context> Context::create(const ContextOptions& options) {
    std::unique_ptr<Context> context(new Context);
    context->faults_ = DeviceFaults::fromEnvironment();
    context->createInstance(validationWanted(options.validation));
    std::string selector = options.deviceSelector;
    if (selector.empty())
        if (const char* env = std::getenv("HEADLIGHT_VULKAN_DEVICE")) selector = env;
    context->pickDevice(selector);
    context->createDevice();
    return context;
}

namespace {
std::atomic<bool> contextHung{false};
} // namespace

bool anyContextHung() { return contextHung.load(); }

void Context::markHung() {
    hung_ = true;
    contextHung = true;
}

Context::~Context() {
    // A hung device is abandoned, not destroyed: waiting for it would hang the program too.
    if (device_ && !hung_) {
        vkDeviceWaitIdle(device_);
        vkDestroyCommandPool(device_, commandPool_, nullptr);
        vkDestroyDevice(device_, nullptr);
    }
    if (hung_) return; // the driver may still run the abandoned batch: keep its instance
    if (messenger_) {
        auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        destroy(instance_, messenger_, nullptr);
    }
    if (instance_) vkDestroyInstance(instance_, nullptr);
}

void Context::createInstance(bool validation) {
    std::vector<const char*> layers;
    std::vector<const char*> extensions;
    if (validation && hasLayer(kValidationLayer)) {
        layers.push_back(kValidationLayer);
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    } else if (validation) {
        messages_.push_back("validation requested but VK_LAYER_KHRONOS_validation is not installed");
    }
    instance_ = makeInstance(layers, extensions);
    if (layers.empty()) return;

    VkDebugUtilsMessengerCreateInfoEXT create{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    create.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    create.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
    create.pfnUserCallback = &Context::onValidationMessage;
    create.pUserData = this;
    auto makeMessenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    check(makeMessenger(instance_, &create, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
}

void Context::pickDevice(const std::string& selector) {
    const auto devices = physicalDevices(instance_);
    std::vector<DeviceInfo> infos;
    for (uint32_t i = 0; i < devices.size(); ++i) infos.push_back(describe(devices[i], i));
    const std::optional<std::size_t> chosen = selectDevice(infos, selector);
    if (!chosen) {
        std::string names;
        for (const DeviceInfo& d : infos) names += (names.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name;
        throw VulkanError("no Vulkan device matches '" + selector + "' (devices: " + names + ")");
    }
    physical_ = devices[*chosen];
    info_ = infos[*chosen];
    vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);
    for (uint32_t i = 0; i < memory_.memoryHeapCount; ++i)
        if ((memory_.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            memory_.memoryHeaps[i].size == info_.deviceLocalBytes)
            deviceHeap_ = i;
    memoryBudgetQuery_ = hasDeviceExtension(physical_, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
}

void Context::createDevice() {
    uint32_t familyCount = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &familyCount, nullptr);
    std::vector<VkQueueFamilyProperties> families(familyCount);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &familyCount, families.data());
    const auto compute = std::find_if(families.begin(), families.end(), [](const VkQueueFamilyProperties& f) {
        return f.queueFlags & VK_QUEUE_COMPUTE_BIT;
    });
    if (compute == families.end()) throw VulkanError("device '" + info_.name + "' has no compute queue");
    queueFamily_ = static_cast<uint32_t>(compute - families.begin());

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueFamilyIndex = queueFamily_;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;

    VkPhysicalDeviceVulkan11Features features11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    features11.storageBuffer16BitAccess = info_.storageBuffer16Bit;
    VkPhysicalDeviceVulkan12Features features12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    features12.shaderFloat16 = info_.shaderFloat16;
    features11.pNext = &features12;

    VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    create.pNext = &features11;
    create.queueCreateInfoCount = 1;
    create.pQueueCreateInfos = &queue;
    const char* budgetExtension = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    if (memoryBudgetQuery_) {
        create.enabledExtensionCount = 1;
        create.ppEnabledExtensionNames = &budgetExtension;
    }
    check(vkCreateDevice(physical_, &create, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, queueFamily_, 0, &queue_);

    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = queueFamily_;
    check(vkCreateCommandPool(device_, &pool, nullptr, &commandPool_), "vkCreateCommandPool");
}

uint32_t Context::memoryType(uint32_t typeBits, VkMemoryPropertyFlags required,
                             VkMemoryPropertyFlags preferred) const {
    int fallback = -1;
    for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
        const VkMemoryPropertyFlags flags = memory_.memoryTypes[i].propertyFlags;
        if (!(typeBits & (1u << i)) || (flags & required) != required) continue;
        if ((flags & preferred) == preferred) return i;
        if (fallback < 0) fallback = static_cast<int>(i);
    }
    if (fallback < 0) throw VulkanError("device '" + info_.name + "' has no suitable memory type");
    return static_cast<uint32_t>(fallback);
}

std::vector<std::string> Context::validationMessages() const {
    std::lock_guard lock(messagesMutex_);
    return messages_;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Context::onValidationMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                            VkDebugUtilsMessageTypeFlagsEXT,
                                                            const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                            void* self) {
    auto* context = static_cast<Context*>(self);
    const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    if (error) ++context->validationErrors_;
    std::lock_guard lock(context->messagesMutex_);
    context->messages_.push_back(std::string(error ? "error: " : "warning: ") + data->pMessage);
    return VK_FALSE;
}
} // namespace headlight::vk
