// Toggle → pixels in the window (issue 19 §4 asks overhead ≤ 30 % on a BERT-base-sized model at
// T = 128, and p95 ≤ 25 ms on the zoo's models). The main window runs on the CPU backend (offscreen
// platform, 1500 × 950, the heatmap view); the mask is toggled between Longformer and none through
// the path a click on the variant panel takes (panel → undo stack → Workspace → ForwardRunner's
// worker → finished → views refreshed), and timed until the window's repaint that shows the new
// result has been flushed. The model's pass cache is emptied before each toggle, so that each one
// runs the whole pass (toggling back would otherwise show the kept one). After each toggle the
// same pass runs bare (TransformerModel::forward of the same text, variant and capture, no window
// work), so that both see the same load. Models: a BERT-base-sized random model at T = 128, zoo
// models at their 64-token context, and the tiny golden BERT and GPT-2 (tests/data/models) on the
// window's sample text, where the pass costs little and the window's own work dominates.
// Counters: toggle_p50_ms, toggle_p95_ms (wall); forward_p50_ms (the bare pass); overhead =
// toggle_p50 / forward_p50 − 1; pass_p50_ms (the runner's pass as its result reports it);
// window_p50_ms (toggle minus that pass: thread hops, statistics, refresh, layout, paint);
// gui_cpu_p50_ms (the GUI thread's CPU time per toggle); and in process CPU time, which a loaded
// machine disturbs less (though it counts OpenMP threads spinning between regions),
// toggle_cpu_p50_ms, forward_cpu_p50_ms and cpu_overhead.
#include "bert_base.h"
#include "figure_view.h"
#include "main_window.h"
#include "text_input.h"
#include "variant_dock.h"
#include "variant_panel.h"

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QSettings>
#include <QStandardPaths>
#include <algorithm>
#include <benchmark/benchmark.h>
#include <functional>
#include <random>
#include <stdexcept>
#include <time.h>

using namespace headlight;

namespace {

constexpr int kMask = 1; // VariantPanel::optionGroups() index of the sparse mask
constexpr int kBertToggles = 20;
constexpr int kZooToggles = 40;
constexpr int kWarmUpToggles = 2;
const char* const kZooModels[] = {"pre_ln", "rope", "encoder", "alibi"};
const char* const kGoldenModels[] = {"bert", "gpt2"};

double cpuMs(clockid_t clock) {
    timespec now{};
    clock_gettime(clock, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

double processCpuMs() {
    return cpuMs(CLOCK_PROCESS_CPUTIME_ID);
}

double guiCpuMs() { // the calling (GUI) thread's
    return cpuMs(CLOCK_THREAD_CPUTIME_ID);
}

double percentile(std::vector<double> values, double share) {
    std::sort(values.begin(), values.end());
    return values[std::size_t(share * double(values.size() - 1) + 0.5)];
}

// The main window with a clock on the frame that shows a new result. The figure view paints
// inside the top-level window's UpdateRequest (the backing store's sync), which ends by flushing
// the frame to the platform window: when that event returns after the view painted a result, the
// new pixels are out.
class TimedWindow : public app::MainWindow {
public:
    TimedWindow()
        : MainWindow(app::LaunchOptions{BackendKind::Cpu, {}}) {
        workspace()->figureView()->installEventFilter(this);
        connect(workspace(), &app::Workspace::resultShown, this, [this] { resultShown_ = true; });
    }

    // Runs `toggle` and returns once the frame showing its result is out.
    void timeUntilPixels(const std::function<void()>& toggle) {
        resultShown_ = figurePainted_ = framed_ = false;
        toggle();
        QEventLoop loop;
        while (!framed_)
            loop.processEvents(QEventLoop::WaitForMoreEvents);
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Paint && resultShown_ && watched == workspace()->figureView())
            figurePainted_ = true;
        return MainWindow::eventFilter(watched, event);
    }

    bool event(QEvent* event) override {
        const bool handled = MainWindow::event(event);
        if (event->type() == QEvent::UpdateRequest && figurePainted_) framed_ = true;
        return handled;
    }

private:
    bool resultShown_ = false, figurePainted_ = false, framed_ = false;
};

struct Samples {
    std::vector<double> toggleMs, toggleCpuMs, guiCpuMs, passMs, windowMs, forwardMs, forwardCpuMs;
};

double elapsedMs(const QElapsedTimer& clock) {
    return double(clock.nsecsElapsed()) / 1e6;
}

// The toggle's pass without the window: its text, variant and capture, on the GUI thread.
void measureBareForward(const app::ForwardResult& result, Samples& samples) {
    const app::LoadedModel& model = *result.model;
    const ModelInput input = app::prepareText(model.tokenizer.get(), result.text).input;
    CaptureRequest capture;
    capture.internals = true;
    QElapsedTimer clock;
    clock.start();
    const double cpuStart = processCpuMs();
    const Trace trace = model.model->forward(input, capture, result.variant);
    benchmark::DoNotOptimize(trace.layers.data());
    samples.forwardMs.push_back(elapsedMs(clock));
    samples.forwardCpuMs.push_back(processCpuMs() - cpuStart);
}

// Alternates the mask between Longformer and none from the variant panel, as a click does, each
// toggle followed by its bare pass (so that both see the same load). The model's pass cache is
// emptied before each toggle: toggling back would otherwise show the kept pass, and every toggle
// is to time a whole pass.
Samples measureToggles(TimedWindow& window, int toggles) {
    QComboBox* masks = window.variantDock()->panel()->comboOf(kMask);
    Samples samples;
    for (int i = 0; i < kWarmUpToggles + toggles; ++i) {
        const int choice = i % 2 == 0 ? 2 : 0; // Longformer, then none
        window.workspace()->sharedModel()->passCache->clear();
        QElapsedTimer clock;
        clock.start();
        const double cpuStart = processCpuMs(), guiStart = guiCpuMs();
        window.timeUntilPixels([&] {
            masks->setCurrentIndex(choice);
            Q_EMIT masks->activated(choice);
        });
        const double toggleMs = elapsedMs(clock), toggleCpuMs = processCpuMs() - cpuStart;
        const double toggleGuiMs = guiCpuMs() - guiStart;
        const app::ForwardResult* result = window.workspace()->result();
        if (!result || result->tokenCount() == 0)
            throw std::runtime_error("a toggle showed no pass");
        if (i < kWarmUpToggles) continue;
        samples.toggleMs.push_back(toggleMs);
        samples.toggleCpuMs.push_back(toggleCpuMs);
        samples.guiCpuMs.push_back(toggleGuiMs);
        samples.passMs.push_back(result->forwardMs);
        samples.windowMs.push_back(toggleMs - result->forwardMs);
        measureBareForward(*result, samples);
    }
    return samples;
}

void measure(benchmark::State& state, TimedWindow& window, int toggles) {
    Samples samples;
    for (auto _ : state)
        samples = measureToggles(window, toggles);
    const double toggleP50 = percentile(samples.toggleMs, 0.5);
    const double forwardP50 = percentile(samples.forwardMs, 0.5);
    state.counters["tokens"] = window.workspace()->tokenCount();
    state.counters["toggle_p50_ms"] = toggleP50;
    state.counters["toggle_p95_ms"] = percentile(samples.toggleMs, 0.95);
    state.counters["pass_p50_ms"] = percentile(samples.passMs, 0.5);
    state.counters["window_p50_ms"] = percentile(samples.windowMs, 0.5);
    state.counters["forward_p50_ms"] = forwardP50;
    state.counters["overhead"] = toggleP50 / forwardP50 - 1.0;
    state.counters["gui_cpu_p50_ms"] = percentile(samples.guiCpuMs, 0.5);
    state.counters["toggle_cpu_p50_ms"] = percentile(samples.toggleCpuMs, 0.5);
    state.counters["forward_cpu_p50_ms"] = percentile(samples.forwardCpuMs, 0.5);
    state.counters["cpu_overhead"] =
        percentile(samples.toggleCpuMs, 0.5) / percentile(samples.forwardCpuMs, 0.5) - 1.0;
}

// Waits until the window shows a pass of `tokens` tokens.
void waitForTokens(TimedWindow& window, int tokens) {
    QElapsedTimer clock;
    clock.start();
    while (window.workspace()->tokenCount() != tokens || window.workspace()->runner().busy()) {
        if (clock.elapsed() > 600000) throw std::runtime_error("the window showed no pass");
        QApplication::processEvents(QEventLoop::AllEvents, 20);
    }
}

// Waits until the window shows the first pass of the checkpoint it opened.
void waitForFirstPass(TimedWindow& window) {
    QElapsedTimer clock;
    clock.start();
    while (window.workspace()->tokenCount() == 0 || window.workspace()->runner().busy()) {
        if (clock.elapsed() > 600000) throw std::runtime_error("the window showed no pass");
        QApplication::processEvents(QEventLoop::AllEvents, 20);
    }
}

std::shared_ptr<const app::LoadedModel> randomBertBase() {
    const ModelSpec spec = bench::bertBase();
    const HostWeights weights = bench::randomBertWeights(spec);
    auto model = std::make_shared<app::LoadedModel>();
    model->folder = QStringLiteral("random-bert-base");
    model->backend = makeCpuBackend();
    model->model = std::make_unique<TransformerModel>(spec, weights, *model->backend);
    model->positionTable = weights.positionEmbedding;
    return model;
}

std::unique_ptr<TimedWindow> openWindow() {
    auto window = std::make_unique<TimedWindow>();
    window->resize(1500, 950);
    window->show();
    return window;
}

void BM_ToggleBertBase(benchmark::State& state) {
    const auto window = openWindow();
    QStringList ids; // T = 128 token ids (the model has no tokenizer)
    std::mt19937 random(7);
    for (int t = 0; t < 128; ++t)
        ids << QString::number(1000 + random() % 20000);
    window->workspace()->setText(ids.join(' '));
    window->workspace()->setModel(randomBertBase());
    waitForTokens(*window, 128);
    measure(state, *window, kBertToggles);
}

void BM_ToggleZoo(benchmark::State& state) {
    const char* name = kZooModels[state.range(0)];
    state.SetLabel(name);
    const auto window = openWindow();
    window->openCheckpoint(QStringLiteral(HEADLIGHT_SOURCE_DIR "/resources/models/") + name);
    window->workspace()->setText(QString(64, 'a')); // 64 tokens, the zoo's context
    waitForTokens(*window, 64);
    measure(state, *window, kZooToggles);
}

void BM_ToggleGolden(benchmark::State& state) {
    const char* name = kGoldenModels[state.range(0)];
    state.SetLabel(name);
    const auto window = openWindow();
    window->openCheckpoint(QStringLiteral(HEADLIGHT_SOURCE_DIR "/tests/data/models/") + name);
    waitForFirstPass(*window);
    measure(state, *window, kZooToggles);
}
} // namespace

BENCHMARK(BM_ToggleBertBase)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_ToggleZoo)
    ->DenseRange(0, std::size(kZooModels) - 1)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK(BM_ToggleGolden)
    ->DenseRange(0, std::size(kGoldenModels) - 1)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true); // the window's settings start empty, as in the tests
    QSettings().clear();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
