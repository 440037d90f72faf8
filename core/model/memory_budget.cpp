#include "model/memory_budget.h"

#include "backend/vulkan/vk_error.h"
#include "io/checkpoint.h"
#include "io/stored_matrix.h"
#include "io/tensor_file.h"
#include "model/model_family.h"
#include "model/transformer.h"

#include <QByteArray>
#include <QFile>
#include <QString>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <thread>

namespace headlight {
namespace {

constexpr const char* kLimitVariable = "HEADLIGHT_MEMORY_LIMIT_MB";
constexpr double kBytesPerMB = 1e6;
constexpr double kF32 = 4.0;

struct Available {
    double bytes = 0.0;
    bool fromVariable = false;
};

// Whole small files under /proc and /sys; an empty result means "not readable here".
QByteArray readSmallFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return file.read(1 << 16); // procfs files report size 0, so read a bounded amount
}

std::optional<double> memAvailableBytes() {
    for (const QByteArray& line : readSmallFile("/proc/meminfo").split('\n')) {
        if (!line.startsWith("MemAvailable:")) continue;
        const QList<QByteArray> fields = line.simplified().split(' ');
        bool ok = false;
        const double kib = fields.size() >= 2 ? fields[1].toDouble(&ok) : 0.0;
        if (ok) return kib * 1024.0;
    }
    return std::nullopt;
}

// In a container MemAvailable is the host's, while the OOM killer acts at the cgroup's limit:
// take the least headroom (memory.max − memory.current) of the process's cgroup and its parents.
std::optional<double> cgroupHeadroomBytes() {
    QByteArray path;
    for (const QByteArray& line : readSmallFile("/proc/self/cgroup").split('\n'))
        if (line.startsWith("0::")) path = line.mid(3).trimmed();
    if (path.isEmpty()) return std::nullopt;
    std::optional<double> least;
    while (true) {
        const QString dir = "/sys/fs/cgroup" + QString::fromUtf8(path == "/" ? "" : path);
        bool maxOk = false, currentOk = false;
        const double max = readSmallFile(dir + "/memory.max").trimmed().toDouble(&maxOk);
        const double current =
            readSmallFile(dir + "/memory.current").trimmed().toDouble(&currentOk);
        if (maxOk && currentOk) least = std::min(least.value_or(max), std::max(max - current, 0.0));
        const qsizetype slash = path.lastIndexOf('/');
        if (slash <= 0) break;
        path.truncate(slash);
    }
    return least;
}

std::optional<Available> available() {
    if (const char* limit = std::getenv(kLimitVariable)) {
        char* end = nullptr;
        const double megabytes = std::strtod(limit, &end);
        if (end == limit || *end != '\0' || !std::isfinite(megabytes) || megabytes < 0)
            throw ModelError(std::string(kLimitVariable) + " '" + limit +
                             "' is not a number of megabytes");
        return Available{megabytes * kBytesPerMB, true};
    }
    std::optional<double> bytes = memAvailableBytes();
    if (const auto headroom = cgroupHeadroomBytes())
        bytes = std::min(bytes.value_or(*headroom), *headroom);
    if (!bytes) return std::nullopt;
    return Available{*bytes, false};
}

std::string availableText(const Available& memory) {
    return formatBytes(memory.bytes) + " is available" +
           (memory.fromVariable ? std::string(" (limit set by ") + kLimitVariable + ")" : "");
}

std::string counted(int64_t count, const char* noun) {
    return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

int64_t capturedLayers(const ModelSpec& spec, const CaptureRequest& capture) {
    int64_t count = 0;
    for (int l = 0; l < spec.layers; ++l)
        count += capture.wantsLayer(l) ? 1 : 0;
    return count;
}

// "capturing scores of 3 layers × 12 heads": what a refused capture holds.
std::string capturePhrase(const ModelSpec& spec, const CaptureRequest& capture) {
    const std::string what = capture.scores && capture.probabilities
                                 ? "capturing scores and probabilities of "
                             : capture.scores ? "capturing scores of "
                                              : "capturing ";
    return what + counted(capturedLayers(spec, capture), "layer") + " × " +
           counted(spec.heads, "head");
}

const char* captureAdvice(const CaptureRequest& capture) {
    return capture.scores ? ": capture fewer layers, leave out the scores, or shorten the text"
                          : ": capture fewer layers or shorten the text";
}

std::string deviceAvailableText(const DeviceMemory& device) {
    return formatBytes(device.available) + " is available (" + device.source + ")";
}

// The tensors a load keeps mapped in the stored dtype: the mappable matrices, less those the
// layout widens. Invalid for the others.
class MappedOnLoad {
public:
    MappedOnLoad(const io::Checkpoint& checkpoint, const ModelSpec& spec)
        : checkpoint_(checkpoint) {
        if (const auto widened = familyOf(spec.architecture).widenedMatrices)
            for (std::string& name : widened(checkpoint, spec))
                widened_.insert(std::move(name));
    }
    io::StoredMatrix operator()(const std::string& name) const {
        return widened_.contains(name) ? io::StoredMatrix{} : checkpoint_.mappedMatrix(name);
    }

private:
    const io::Checkpoint& checkpoint_;
    std::set<std::string> widened_;
};
} // namespace

std::optional<double> availableMemoryBytes() {
    const auto memory = available();
    return memory ? std::optional<double>(memory->bytes) : std::nullopt;
}

std::string formatBytes(double bytes) {
    struct Unit {
        double size;
        const char* name;
    };
    constexpr Unit kUnits[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}};
    char text[64];
    for (const Unit& unit : kUnits)
        if (bytes >= unit.size) {
            std::snprintf(text, sizeof text, "%.1f %s", bytes / unit.size, unit.name);
            return text;
        }
    std::snprintf(text, sizeof text, "%.0f bytes", bytes);
    return text;
}

double checkpointF32Bytes(const io::Checkpoint& checkpoint) {
    double elements = 0.0;
    for (const std::string& name : checkpoint.names())
        elements += double(elementCount(checkpoint.info(name).shape));
    return elements * kF32;
}

WeightBytes weightBytes(const io::Checkpoint& checkpoint, const ModelSpec& spec) {
    const MappedOnLoad mapped(checkpoint, spec);
    WeightBytes bytes;
    for (const std::string& name : checkpoint.names()) {
        const double elements = double(elementCount(checkpoint.info(name).shape));
        bytes.parameters += elements;
        const io::StoredMatrix stored = mapped(name);
        if (stored.valid())
            bytes.mapped += stored.storedBytes();
        else
            bytes.widened += elements * kF32;
    }
    return bytes;
}

double loadBytes(const WeightBytes& weights, bool backendInHostMemory) {
    return weights.mapped + weights.widened * (backendInHostMemory ? 2.0 : 1.0);
}

MemoryPlan planMemory(const io::Checkpoint& checkpoint, const ModelSpec& spec, int64_t tokens,
                      const CaptureRequest& capture, bool backendInHostMemory) {
    MemoryPlan plan;
    plan.weights = weightBytes(checkpoint, spec);
    plan.load = loadBytes(plan.weights, backendInHostMemory);
    plan.tokens = tokens;
    plan.forward = estimateForward(spec, tokens, capture, backendInHostMemory);
    if (const auto memory = available()) plan.available = memory->bytes;
    return plan;
}

std::string describePlan(const MemoryPlan& plan) {
    std::string text = "peak " + formatBytes(plan.peak()) + " for " +
                       counted(plan.tokens, "token") + " (" + formatBytes(plan.weights.mapped) +
                       " mapped weights, " + formatBytes(plan.load - plan.weights.mapped) +
                       " widened, " + formatBytes(plan.forward.total()) + " for the pass)";
    if (plan.available) text += " of " + formatBytes(*plan.available) + " available";
    return text;
}

ForwardEstimate estimateForward(const ModelSpec& spec, int64_t tokens,
                                const CaptureRequest& capture, bool backendInHostMemory) {
    const double t = double(tokens), d = double(spec.hidden), heads = double(spec.heads);
    const double headDim = double(spec.headDim), kvHeads = double(spec.kvHeads);
    const double square = t * t * kF32; // one head's [T, T] map
    int64_t capturedLayers = 0;
    for (int l = 0; l < spec.layers; ++l)
        capturedLayers += capture.wantsLayer(l) ? 1 : 0;
    const double kinds = double(capture.probabilities) + double(capture.scores);
    const double keptHeads = capture.heads.empty() ? heads : double(capture.heads.size());

    ForwardEstimate estimate;
    // The backend holds every head of each captured layer until the pass ends; the trace keeps
    // the requested heads, and each layer's full [H, T, T] is downloaded once before selection.
    const double backendCopies = backendInHostMemory ? heads : 0.0;
    if (capturedLayers > 0 && kinds > 0)
        estimate.capture =
            kinds * double(capturedLayers) * (backendCopies + keptHeads) * square + heads * square;
    const double state = t * d * kF32;
    const double hiddenCopies = backendInHostMemory ? 2.0 : 1.0;
    estimate.hidden = state; // the last hidden state
    if (capture.hiddenStates) estimate.hidden += (double(spec.layers) + 1.0) * state * hiddenCopies;
    if (backendInHostMemory) {
        // Live inside one layer: x, the residual sum and the normed copy; q, k, v, the attention
        // context and output; the MLP's up and gate projections and its output; and one block
        // of score rows [256, T] per attention thread (the CPU backend runs heads and blocks of
        // query rows in parallel, one thread per core).
        const double threads = double(std::max(1u, std::thread::hardware_concurrency()));
        const double projections = t * (2.0 * heads * headDim + 2.0 * kvHeads * headDim) * kF32;
        const double mlp = 2.0 * t * double(spec.intermediate) * kF32;
        const double scoreBlock = std::min(t, 256.0) * t * kF32;
        estimate.workingSet = 5.0 * state + projections + mlp + threads * scoreBlock;
    }
    return estimate;
}

void checkLoadBudget(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                     bool backendInHostMemory) {
    const auto memory = available();
    if (!memory) return;
    const WeightBytes weights = weightBytes(checkpoint, spec);
    const double need = loadBytes(weights, backendInHostMemory);
    if (need <= memory->bytes) return;
    const std::string stored =
        " (" + formatBytes(weights.mapped) + " mapped in the stored dtype, " +
        formatBytes(weights.widened) + " as f32" +
        (backendInHostMemory ? ", held twice while the CPU backend copies it)" : ")");
    throw ModelError(checkpoint.folder() + ": loading the weights needs " + formatBytes(need) +
                     stored + " but " + availableText(*memory) +
                     ": close other programs or choose a smaller model");
}

std::optional<std::string> saeLoadRefusal(const io::TensorFile& weights) {
    const auto memory = available();
    if (!memory) return std::nullopt;
    double need = 0.0;
    for (const auto& [name, info] : weights.tensors()) {
        double elements = 1.0; // in doubles: a hostile header's shape must not overflow
        for (const int64_t extent : info.shape)
            elements *= double(extent);
        need += 4.0 * elements;
    }
    if (need <= memory->bytes) return std::nullopt;
    return weights.path() + ": the SAE's weights need " + formatBytes(need) + " as f32 but " +
           availableText(*memory) + ": close other programs or choose a narrower SAE";
}

void checkForwardBudget(const ModelSpec& spec, int64_t tokens, const CaptureRequest& capture,
                        bool backendInHostMemory) {
    const auto memory = available();
    if (!memory) return;
    const ForwardEstimate estimate = estimateForward(spec, tokens, capture, backendInHostMemory);
    const double need = estimate.total();
    if (need <= memory->bytes) return;
    const std::string tail = " needs " + formatBytes(need) + " but " + availableText(*memory);
    const std::string at = " at " + counted(tokens, "token");
    // Name the largest part, since reducing it is what helps.
    if (estimate.capture >= estimate.hidden && estimate.capture >= estimate.workingSet)
        throw ModelError(capturePhrase(spec, capture) + at + tail + captureAdvice(capture));
    if (estimate.hidden >= estimate.workingSet)
        throw ModelError("keeping the hidden states of " + counted(spec.layers + 1, "layer") + at +
                         tail + ": leave out the hidden states or shorten the text");
    throw ModelError("a forward pass" + at + tail + ": shorten the text");
}

double deviceLoadBytes(const io::Checkpoint& checkpoint, const ModelSpec& spec, bool weights16Bit) {
    const MappedOnLoad mapped(checkpoint, spec);
    double total = 0.0, largest = 0.0;
    for (const std::string& name : checkpoint.names()) {
        const io::StoredMatrix stored = weights16Bit ? mapped(name) : io::StoredMatrix{};
        // Why words: a device buffer holds whole 32-bit words (VulkanStorage).
        const double bytes = stored.valid()
                                 ? std::ceil(double(stored.storedBytes()) / 4.0) * 4.0
                                 : double(elementCount(checkpoint.info(name).shape)) * kF32;
        total += bytes;
        largest = std::max(largest, bytes);
    }
    return total + largest;
}

DeviceForwardEstimate estimateDeviceForward(const ModelSpec& spec, int64_t tokens,
                                            const CaptureRequest& capture) {
    const double t = double(tokens), d = double(spec.hidden), heads = double(spec.heads);
    const double square = t * t * kF32;
    const double kinds = double(capture.probabilities) + double(capture.scores);
    DeviceForwardEstimate estimate;
    // [H, T, T] per captured layer and kind, allocated before the pass; one more while a layer is
    // downloaded through a staging buffer.
    const int64_t layers = capturedLayers(spec, capture);
    if (layers > 0 && kinds > 0)
        estimate.capture = kinds * double(layers) * heads * square + heads * square;
    // The Vulkan backend keeps every tensor a pass uses alive until the pass runs, so all layers
    // count, not one. Per layer: the layer output, a normed or summed copy, the attention and
    // MLP outputs ([T, D] each); q and the attention context; k and v; the MLP's up projection
    // and its gate (counted for every architecture). Then the embeddings: token, position and
    // token-type rows, and the final norm's output.
    const double qDim = heads * double(spec.headDim), kvDim = double(spec.kvHeads) * spec.headDim;
    const double perLayer = t * (4.0 * d + 2.0 * qDim + 2.0 * kvDim + 2.0 * spec.intermediate);
    estimate.activations = (double(spec.layers) * perLayer + 4.0 * t * d) * kF32;
    return estimate;
}

void checkDeviceLoadBudget(const io::Checkpoint& checkpoint, const ModelSpec& spec,
                           const DeviceMemory& device, bool weights16Bit) {
    const double need = deviceLoadBytes(checkpoint, spec, weights16Bit);
    if (need <= device.available) return;
    throw vk::OutOfDeviceMemory(
        checkpoint.folder() + ": loading the weights needs " + formatBytes(need) +
            " of device memory but " + deviceAvailableText(device) +
            ": close other programs using the GPU or choose a smaller model",
        VK_ERROR_OUT_OF_DEVICE_MEMORY);
}

void checkDeviceForwardBudget(const ModelSpec& spec, int64_t tokens, const CaptureRequest& capture,
                              const DeviceMemory& device) {
    const DeviceForwardEstimate estimate = estimateDeviceForward(spec, tokens, capture);
    if (estimate.total() <= device.available) return;
    const std::string at = " at " + counted(tokens, "token");
    const std::string tail = " needs " + formatBytes(estimate.total()) + " of device memory but " +
                             deviceAvailableText(device);
    const std::string message =
        estimate.capture >= estimate.activations
            ? capturePhrase(spec, capture) + at + tail + captureAdvice(capture)
            : "a forward pass" + at + tail + ": shorten the text";
    throw vk::OutOfDeviceMemory(message, VK_ERROR_OUT_OF_DEVICE_MEMORY);
}
} // namespace headlight
