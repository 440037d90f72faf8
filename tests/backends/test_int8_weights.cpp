// `--weights int8`: every linear weight quantised per output channel at load. The pass must be
// exactly the f32 pass on the dequantised weights (q · scale), which this test writes into a
// checkpoint of its own, within 1e-4; the per-layer error the load reports (and `headlight info
// --weights int8` prints) must be ‖W − Ŵ‖_F / ‖W‖_F as computed here from the checkpoint.
#include "backend_fixture.h"
#include "cli_runner.h"
#include "golden.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/weight_quantization.h"
#include "temp_files.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace headlight;

namespace {

// q, k, v, o and the MLP's gate, up and down: Llama's linear layers (the embedding and norms stay).
bool isLinearWeight(const std::string& name) {
    return name.find("_proj.weight") != std::string::npos;
}

// Row-wise int8 round trip of a [rows, cols] tensor, in place; adds to the error sums.
void roundTripInt8(Tensor& w, double& error, double& norm) {
    const int64_t rows = w.dim(0), cols = w.dim(1);
    for (int64_t r = 0; r < rows; ++r) {
        float* row = w.data() + r * cols;
        float largest = 0.0f;
        for (int64_t c = 0; c < cols; ++c)
            largest = std::max(largest, std::abs(row[c]));
        const float scale = largest > 0.0f ? largest / 127.0f : 1.0f;
        for (int64_t c = 0; c < cols; ++c) {
            const float back = std::clamp(std::nearbyint(row[c] / scale), -127.0f, 127.0f) * scale;
            error += (double(row[c]) - back) * (double(row[c]) - back);
            norm += double(row[c]) * double(row[c]);
            row[c] = back;
        }
    }
}

// The Llama golden checkpoint with its linear weights dequantised, and each layer's error.
std::vector<double> writeDequantised(const QString& golden, const QString& folder) {
    const io::Checkpoint checkpoint(golden.toStdString());
    std::vector<io::TensorToWrite> tensors;
    std::vector<double> errors, norms;
    for (const std::string& name : checkpoint.names()) {
        Tensor values = checkpoint.loadF32(name);
        if (isLinearWeight(name)) {
            const int layer = std::stoi(name.substr(name.find("layers.") + 7));
            errors.resize(std::size_t(layer + 1));
            norms.resize(std::size_t(layer + 1));
            roundTripInt8(values, errors[std::size_t(layer)], norms[std::size_t(layer)]);
        }
        tensors.push_back({name,
                           values.shape(),
                           std::vector<float>(values.values().begin(), values.values().end()),
                           {}});
    }
    io::writeSafetensors((folder + "/model.safetensors").toStdString(), tensors);
    QFile::copy(golden + "/config.json", folder + "/config.json");
    std::vector<double> relative;
    for (std::size_t l = 0; l < errors.size(); ++l)
        relative.push_back(std::sqrt(errors[l] / norms[l]));
    return relative;
}
} // namespace

class TestInt8Weights : public QObject {
    Q_OBJECT
    test::BackendFixture fixture_;
    test::ScratchDir scratch_;

public:
    explicit TestInt8Weights(BackendKind kind)
        : fixture_(kind) {}

private Q_SLOTS:
    void initTestCase() { fixture_.open(); }
    void cleanupTestCase() { fixture_.close(); }

    void int8PassIsTheDequantisedPass() {
        const test::GoldenCase golden = test::goldenCaseOf("llama");
        const io::SafetensorsFile expected(golden.tensorsPath().toStdString());
        const ModelInput input = test::goldenInput(expected);
        const QString dequantised = scratch_.freshFolder();
        const std::vector<double> errors = writeDequantised(golden.folder, dequantised);

        QuantizationReport report;
        const auto int8 = loadModelInt8(golden.folder.toStdString(), fixture_.backend(), &report);
        const auto reference = loadModel(dequantised.toStdString(), fixture_.backend());
        CaptureRequest capture;
        capture.hiddenStates = true;
        const Trace ours = int8->forward(input, capture),
                    theirs = reference->forward(input, capture);
        QString where;
        QVERIFY2(test::maxAbsDiff(ours.stackedProbabilities(), theirs.stackedProbabilities(),
                                  &where) <= test::kGoldenTolerance,
                 qPrintable("attentions " + where));
        QVERIFY2(test::maxAbsDiff(ours.lastHiddenState, theirs.lastHiddenState, &where) <=
                     test::kGoldenTolerance,
                 qPrintable("last_hidden_state " + where));

        QCOMPARE(report.layerRelativeError.size(), errors.size());
        for (std::size_t l = 0; l < errors.size(); ++l) {
            QVERIFY2(std::abs(report.layerRelativeError[l] - errors[l]) <= 1e-9,
                     qPrintable(QString("layer %1: %2 vs %3")
                                    .arg(l)
                                    .arg(report.layerRelativeError[l])
                                    .arg(errors[l])));
            QVERIFY(errors[l] > 1e-4 && errors[l] < 0.02); // int8 of normal weights: about 0.5 %
        }
        // Each linear weight: one byte per element and one f32 scale per output row.
        const ModelSpec& s = int8->spec();
        const double qd = double(s.heads) * s.headDim, kvd = double(s.kvHeads) * s.headDim;
        const double perLayer =
            qd * s.hidden + 2 * kvd * s.hidden + s.hidden * qd + 3.0 * s.hidden * s.intermediate;
        const double rowsPerLayer = qd + 2 * kvd + s.hidden + 2.0 * s.intermediate + s.hidden;
        QCOMPARE(report.int8Bytes, s.layers * (perLayer + 4.0 * rowsPerLayer));

        if (fixture_.backend().kind() != BackendKind::Cpu) return; // the CLI runs once
        const test::CliResult info =
            test::runHeadlight({"info", "--model", golden.folder, "--weights", "int8", "--json"});
        QVERIFY2(info.exitCode == 0, qPrintable(info.err));
        const QJsonArray printed =
            QJsonDocument::fromJson(info.out.toUtf8()).object()["int8_layer_error"].toArray();
        QCOMPARE(std::size_t(printed.size()), errors.size());
        for (std::size_t l = 0; l < errors.size(); ++l)
            QVERIFY(std::abs(printed[qsizetype(l)].toDouble() - errors[l]) <= 1e-9);
    }
};

HEADLIGHT_TEST_ON_EACH_BACKEND(TestInt8Weights)
#include "test_int8_weights.moc"
