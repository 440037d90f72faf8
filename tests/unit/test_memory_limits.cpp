// Memory checks before a load and before a forward pass (core/model/memory_budget.h): the
// estimates follow their formulas, and with HEADLIGHT_MEMORY_LIMIT_MB set below what a step
// needs, the step is refused with a message that says what to reduce, in the library and in the
// CLI, before any large allocation. The device-memory checks of the Vulkan backend are pure
// numbers here; tests/vulkan/test_device_memory_budget.cpp runs them against a device.
#include "backend/backend.h"
#include "backend/vulkan/vk_error.h"
#include "cli_runner.h"
#include "error_of.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "io/sae_folder.h"
#include "model/memory_budget.h"
#include "model/transformer.h"

#include <QFile>
#include <QTest>
#include <cmath>
#include <thread>

using namespace headlight;

namespace {

constexpr const char* kLimit = "HEADLIGHT_MEMORY_LIMIT_MB";

// Sets the limit for one scope; unset again on exit, even when a check fails.
class MemoryLimit {
public:
    explicit MemoryLimit(const QByteArray& megabytes) { qputenv(kLimit, megabytes); }
    ~MemoryLimit() { qunsetenv(kLimit); }
    MemoryLimit(const MemoryLimit&) = delete;
    MemoryLimit& operator=(const MemoryLimit&) = delete;
};

ModelSpec bertBase() {
    QFile file(QStringLiteral(HEADLIGHT_TEST_DATA "/configs/bert-base-uncased.json"));
    if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read the bert-base config");
    return parseModelConfig(file.readAll().toStdString());
}

template <typename Action> QString modelErrorOf(Action&& action) {
    return test::errorOf<ModelError>(std::forward<Action>(action));
}

// Device refusals throw the out-of-memory error a failed allocation throws, so that the CLI and
// the window fall back to the CPU backend as they do for one.
template <typename Action> QString deviceErrorOf(Action&& action) {
    return test::errorOf<vk::OutOfDeviceMemory>(std::forward<Action>(action));
}

const DeviceMemory kTwoGigabytesOfDevice{2e9, "limit set by HEADLIGHT_VULKAN_MEMORY_BUDGET_MB"};

ModelInput idsOfLength(int tokens) {
    ModelInput input;
    input.ids.assign(std::size_t(tokens), 5);
    return input;
}

constexpr double kSquare8192 = 8192.0 * 8192.0 * 4.0; // one head's [T, T] f32 map at T = 8192
} // namespace

class TestMemoryLimits : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init() { qunsetenv(kLimit); }

    void formatsBytesInDecimalUnits() {
        QCOMPARE(formatBytes(12.0 * 12.0 * kSquare8192), std::string("38.7 GB"));
        QCOMPARE(formatBytes(2e9), std::string("2.0 GB"));
        QCOMPARE(formatBytes(512e6), std::string("512.0 MB"));
        QCOMPARE(formatBytes(12'345), std::string("12.3 kB"));
        QCOMPARE(formatBytes(999), std::string("999 bytes"));
        QCOMPARE(formatBytes(3e15), std::string("3000.0 TB"));
    }

    void readsAvailableMemory() {
        const auto measured = availableMemoryBytes();
        QVERIFY2(measured && *measured > 0, "MemAvailable should be readable on Linux");
        const MemoryLimit limit("2000");
        QCOMPARE(*availableMemoryBytes(), 2e9);
    }

    void refusesAMalformedLimit() {
        const MemoryLimit limit("lots");
        QCOMPARE(modelErrorOf([] { availableMemoryBytes(); }),
                 QString("HEADLIGHT_MEMORY_LIMIT_MB 'lots' is not a number of megabytes"));
    }

    // L_captured · (H on the backend + H kept in the trace) · T² · 4 per captured kind, plus one
    // full layer downloaded before heads are selected.
    void captureEstimateFollowsTheFormula() {
        const ModelSpec spec = bertBase();
        CaptureRequest probabilities;
        const ForwardEstimate device = estimateForward(spec, 8192, probabilities, false);
        QCOMPARE(device.capture, 12.0 * 12.0 * kSquare8192 + 12.0 * kSquare8192);
        QCOMPARE(device.workingSet, 0.0); // in device memory, not the host's
        const ForwardEstimate host = estimateForward(spec, 8192, probabilities, true);
        QCOMPARE(host.capture, 12.0 * 24.0 * kSquare8192 + 12.0 * kSquare8192);
        // Five [T, D] states, q k v and the context, the MLP's two [T, 3072] projections, and
        // one block of 256 score rows per attention thread, never a whole [T, T] map.
        const double oneState = 8192.0 * 768.0 * 4.0;
        const double layerTensors = 5.0 * oneState + 4.0 * oneState + 2.0 * 8192.0 * 3072.0 * 4.0;
        const double threads = std::max(1u, std::thread::hardware_concurrency());
        QCOMPARE(host.workingSet, layerTensors + threads * 256.0 * 8192.0 * 4.0);

        CaptureRequest both;
        both.scores = true;
        QCOMPARE(estimateForward(spec, 8192, both, true).capture,
                 2.0 * 12.0 * 24.0 * kSquare8192 + 12.0 * kSquare8192);

        CaptureRequest narrow;
        narrow.layers = {3};
        narrow.heads = {0, 1};
        QCOMPARE(estimateForward(spec, 8192, narrow, true).capture,
                 1.0 * (12.0 + 2.0) * kSquare8192 + 12.0 * kSquare8192);

        CaptureRequest hidden;
        hidden.probabilities = false;
        hidden.hiddenStates = true;
        const double state = 8192.0 * 768.0 * 4.0;
        const ForwardEstimate states = estimateForward(spec, 8192, hidden, true);
        QCOMPARE(states.capture, 0.0);
        QCOMPARE(states.hidden, state + 13.0 * state * 2.0);
    }

    void refusesACaptureThatDoesNotFit() {
        const ModelSpec spec = bertBase();
        const MemoryLimit limit("2000");
        const CaptureRequest probabilities;
        const std::string need =
            formatBytes(estimateForward(spec, 8192, probabilities, true).total());
        QCOMPARE(modelErrorOf([&] { checkForwardBudget(spec, 8192, probabilities, true); }),
                 QString::fromStdString(
                     "capturing 12 layers × 12 heads at 8192 tokens needs " + need +
                     " but 2.0 GB is available (limit set by HEADLIGHT_MEMORY_LIMIT_MB): capture "
                     "fewer layers or shorten the text"));

        CaptureRequest both;
        both.scores = true;
        both.layers = {0};
        QVERIFY(modelErrorOf([&] { checkForwardBudget(spec, 8192, both, true); })
                    .startsWith("capturing scores and probabilities of 1 layer × 12 heads at 8192 "
                                "tokens needs "));
        QVERIFY(modelErrorOf([&] {
                    checkForwardBudget(spec, 8192, both, true);
                }).endsWith(": capture fewer layers, leave out the scores, or shorten the text"));
    }

    void namesTheLargestPartWithoutCapture() {
        ModelSpec spec = bertBase();
        const MemoryLimit limit("1");
        CaptureRequest nothing;
        nothing.probabilities = false;
        QVERIFY(modelErrorOf([&] {
                    checkForwardBudget(spec, 8192, nothing, true);
                }).startsWith("a forward pass at 8192 tokens needs "));
        QVERIFY(modelErrorOf([&] {
                    checkForwardBudget(spec, 8192, nothing, true);
                }).endsWith(": shorten the text"));

        spec.layers = 48; // deep enough that the kept hidden states outweigh one layer's work
        CaptureRequest hidden = nothing;
        hidden.hiddenStates = true;
        QVERIFY(modelErrorOf([&] {
                    checkForwardBudget(spec, 512, hidden, true);
                }).startsWith("keeping the hidden states of 49 layers at 512 tokens needs "));
    }

    void passesWhatFits() {
        const ModelSpec spec = bertBase();
        const MemoryLimit limit("1000000000");
        checkForwardBudget(spec, 8192, CaptureRequest{}, true);
        checkForwardBudget(spec, 1, CaptureRequest{}, true);
    }

    // The checks sit where the engine allocates: in loadModel before the weights are read, and
    // in forward() before any activation.
    void theEngineChecksBeforeLoadingAndRunning() {
        const std::string folder = (test::goldenRoot() + "/bert").toStdString();
        const auto backend = makeCpuBackend();
        // The F32 golden's matrices stay mapped (one copy); its vectors and the embedding tables,
        // which BERT's layout widens, are held twice.
        const io::Checkpoint checkpoint(folder);
        double matrices = 0.0, vectors = 0.0;
        for (const std::string& name : checkpoint.names()) {
            const io::TensorInfo& info = checkpoint.info(name);
            const bool mapped = info.shape.size() == 2 && !name.starts_with("embeddings.");
            (mapped ? matrices : vectors) += 4.0 * double(elementCount(info.shape));
        }
        QVERIFY(matrices > 50e3 && vectors > 100e3);
        const double need = matrices + 2.0 * vectors;
        QCOMPARE(checkpointF32Bytes(checkpoint), matrices + vectors);
        {
            const MemoryLimit limit(
                QByteArray::number((need - vectors) / 1e6)); // one copy of each fits
            const QString error = modelErrorOf([&] { loadModel(folder, *backend); });
            QVERIFY2(error.startsWith(QString::fromStdString(folder) +
                                      ": loading the weights needs " +
                                      QString::fromStdString(formatBytes(need)) + " (" +
                                      QString::fromStdString(formatBytes(matrices)) +
                                      " mapped in the stored dtype, " +
                                      QString::fromStdString(formatBytes(vectors)) +
                                      " as f32, held twice while the CPU backend copies it)"),
                     qPrintable(error));
            QVERIFY2(error.endsWith("is available (limit set by HEADLIGHT_MEMORY_LIMIT_MB): close "
                                    "other programs or choose a smaller model"),
                     qPrintable(error));
        }
        const auto model = loadModel(folder, *backend);
        const MemoryLimit limit("5");
        QVERIFY(!model->forward(idsOfLength(4)).layers.empty());
        const QString error = modelErrorOf([&] { model->forward(idsOfLength(512)); });
        QVERIFY2(error.startsWith("capturing 2 layers × 4 heads at 512 tokens needs "),
                 qPrintable(error));
        QVERIFY2(
            error.endsWith(" but 5.0 MB is available (limit set by HEADLIGHT_MEMORY_LIMIT_MB): "
                           "capture fewer layers or shorten the text"),
            qPrintable(error));
    }

    // An SAE's weights are refused from the header, before any is widened, when their f32 copies
    // exceed the limit: the zoo's pre_ln SAE holds W_enc [64, 512], W_dec [512, 64], b_enc [512]
    // and b_dec [64] (resources/saes/pre_ln/cfg.json: d_in 64, d_sae 512, standard).
    void refusesAnSaeThatDoesNotFit() {
        const std::string folder = HEADLIGHT_SOURCE_DIR "/resources/saes/pre_ln";
        const double need = 4.0 * (2 * 64 * 512 + 512 + 64);
        {
            const MemoryLimit limit(QByteArray::number((need - 1000.0) / 1e6, 'f', 6));
            const QString error =
                test::errorOf<io::SaeFolderError>([&] { io::readSaeFolder(folder); });
            QCOMPARE(error, QString::fromStdString(
                                folder + "/sae_weights.safetensors: the SAE's weights need " +
                                formatBytes(need) + " as f32 but " + formatBytes(need - 1000.0) +
                                " is available (limit set by HEADLIGHT_MEMORY_LIMIT_MB): close "
                                "other programs or choose a narrower SAE"));
        }
        const MemoryLimit limit(QByteArray::number((need + 1000.0) / 1e6, 'f', 6));
        QCOMPARE(io::readSaeFolder(folder).sae.dSae, 512);
    }

    // On the device every tensor of a pass stays alive until the pass runs: all L layers count.
    void deviceForwardEstimateFollowsTheFormula() {
        const ModelSpec spec = bertBase(); // D = 768, H = 12, head 64, intermediate 3072
        const DeviceForwardEstimate estimate = estimateDeviceForward(spec, 8192, CaptureRequest{});
        QCOMPARE(estimate.capture, 12.0 * 12.0 * kSquare8192 + 12.0 * kSquare8192);
        // per token and layer: 4 × 768 + 2 × 768 (q, context) + 2 × 768 (k, v) + 2 × 3072
        const double perLayer = 8192.0 * (4 * 768 + 2 * 768 + 2 * 768 + 2 * 3072) * 4.0;
        QCOMPARE(estimate.activations, 12.0 * perLayer + 4.0 * 8192.0 * 768.0 * 4.0);

        CaptureRequest scoresOfOne;
        scoresOfOne.scores = true;
        scoresOfOne.layers = {5};
        QCOMPARE(estimateDeviceForward(spec, 8192, scoresOfOne).capture,
                 2.0 * 12.0 * kSquare8192 + 12.0 * kSquare8192);
        CaptureRequest nothing;
        nothing.probabilities = false;
        nothing.hiddenStates = true; // they are the layers' outputs, already counted
        QCOMPARE(estimateDeviceForward(spec, 8192, nothing).capture, 0.0);
        QCOMPARE(estimateDeviceForward(spec, 8192, nothing).activations, estimate.activations);
    }

    // The weights as f32 and a staging copy of the largest tensor (bert's [512, 32] positions);
    // an F32 checkpoint's mapped matrices take as many bytes kept as they are.
    void deviceLoadIsTheWeightsAndOneStagingCopy() {
        const std::string folder = (test::goldenRoot() + "/bert").toStdString();
        const io::Checkpoint checkpoint(folder);
        for (const bool weights16Bit : {false, true})
            QCOMPARE(deviceLoadBytes(checkpoint, loadModelConfig(folder), weights16Bit),
                     checkpointF32Bytes(checkpoint) + 512.0 * 32.0 * 4.0);
    }

    void refusesADeviceLoadThatDoesNotFit() {
        const QString folder = test::goldenRoot() + "/bert";
        const io::Checkpoint checkpoint(folder.toStdString());
        const ModelSpec spec = loadModelConfig(folder.toStdString());
        const QString need =
            QString::fromStdString(formatBytes(deviceLoadBytes(checkpoint, spec, false)));
        const DeviceMemory heap{100e3, "the device-local heap size"};
        QCOMPARE(deviceErrorOf([&] { checkDeviceLoadBudget(checkpoint, spec, heap, false); }),
                 folder + ": loading the weights needs " + need +
                     " of device memory but 100.0 kB is available (the device-local heap size): "
                     "close other programs using the GPU or choose a smaller model");
        checkDeviceLoadBudget(checkpoint, spec,
                              {deviceLoadBytes(checkpoint, spec, false), "exactly enough"}, false);
    }

    void refusesADevicePassThatDoesNotFit() {
        const ModelSpec spec = bertBase();
        const std::string need = formatBytes(estimateDeviceForward(spec, 8192, {}).total());
        QCOMPARE(
            deviceErrorOf([&] { checkDeviceForwardBudget(spec, 8192, {}, kTwoGigabytesOfDevice); }),
            QString::fromStdString("capturing 12 layers × 12 heads at 8192 tokens needs " + need +
                                   " of device memory but 2.0 GB is available (limit set by "
                                   "HEADLIGHT_VULKAN_MEMORY_BUDGET_MB): capture fewer layers "
                                   "or shorten the text"));
        CaptureRequest nothing;
        nothing.probabilities = false;
        const QString error = deviceErrorOf(
            [&] { checkDeviceForwardBudget(spec, 65536, nothing, kTwoGigabytesOfDevice); });
        QVERIFY2(error.startsWith(
                     "a forward pass at 65536 tokens needs 39.5 GB of device memory but 2.0 GB"),
                 qPrintable(error));
        QVERIFY2(error.endsWith(": shorten the text"), qPrintable(error));
        checkDeviceForwardBudget(spec, 512, {}, kTwoGigabytesOfDevice); // 471.9 MB: fits
    }

    void theCliRefusesWithOneLine() {
        const QString folder = test::goldenRoot() + "/bert";
        {
            const MemoryLimit limit("0.1");
            const auto run =
                test::runHeadlight({"inspect", "--model", folder, "--ids", "2,10,3", "--json"});
            QCOMPARE(run.exitCode, 1);
            QCOMPARE(run.err.count('\n'), 1);
            QVERIFY2(
                run.err.startsWith("headlight inspect: " + folder + ": loading the weights needs "),
                qPrintable(run.err));
            QVERIFY2(run.err.contains("but 100.0 kB is available"), qPrintable(run.err));
        }
        {
            const MemoryLimit limit("not-a-number");
            const auto run =
                test::runHeadlight({"inspect", "--model", folder, "--ids", "2,10,3", "--json"});
            QCOMPARE(run.exitCode, 1);
            QCOMPARE(run.err, QString("headlight inspect: HEADLIGHT_MEMORY_LIMIT_MB 'not-a-number' "
                                      "is not a number of megabytes\n"));
        }
    }
};

HEADLIGHT_TEST_GUILESS_MAIN(TestMemoryLimits)
#include "test_memory_limits.moc"
