#pragma once
// A golden checkpoint's weights rounded to BF16 or F16 and written twice, once in that dtype and
// once as the same values in F32: a pass on the first must give what the f32 path gives on the
// second (widening is exact). Shared by test_stored_dtype_models and test_vulkan_weights_16bit.

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "temp_files.h"

#include <Eigen/Core>
#include <QFile>
#include <QString>
#include <QTest>
#include <cstring>
#include <utility>
#include <vector>

namespace headlight::test {

// The data rows both tests run: a QString "model" (Llama keeps its embedding table mapped too;
// BERT widens its embeddings and maps the linear layers; Qwen3 adds the per-head q/k norms) and
// an int "dtype" (BF16, F16).
inline void addRoundedTwinRows() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("dtype");
    for (const char* model : {"llama", "qwen3", "bert"})
        for (const io::DType dtype : {io::DType::BF16, io::DType::F16})
            QTest::newRow(qPrintable(QString("%1/%2").arg(model, io::dtypeName(dtype))))
                << QString(model) << int(dtype);
}

// A float rounded to `dtype` (round to nearest even), as its stored bytes and as the f32 it
// widens to.
struct Rounded {
    uint16_t bits;
    float value;
};

inline Rounded roundTo(io::DType dtype, float value) {
    if (dtype == io::DType::BF16) {
        const Eigen::bfloat16 b(value);
        return {Eigen::numext::bit_cast<uint16_t>(b), float(b)};
    }
    const Eigen::half h(value);
    return {Eigen::numext::bit_cast<uint16_t>(h), float(h)};
}

inline bool isFloat(io::DType dtype) {
    return dtype == io::DType::F32 || dtype == io::DType::F16 || dtype == io::DType::BF16 ||
           dtype == io::DType::F64;
}

// Writes `golden`'s tensors rounded to `dtype` into two new folders with its config.json: one
// stored in `dtype`, one holding the same values as F32. Returns {stored, f32}.
inline std::pair<QString, QString> writeRoundedTwins(const QString& golden, io::DType dtype,
                                                     ScratchDir& scratch) {
    const io::Checkpoint checkpoint(golden.toStdString());
    std::vector<io::TensorToWrite> stored, widened;
    for (const std::string& name : checkpoint.names()) {
        const io::TensorInfo& info = checkpoint.info(name);
        if (!isFloat(info.dtype)) {
            const io::TensorToWrite same{name, info.shape, {},
                                         {},   info.dtype, checkpoint.storedBytes(name)};
            stored.push_back(same);
            widened.push_back(same);
            continue;
        }
        const Tensor values = checkpoint.loadF32(name);
        io::TensorToWrite inDtype{name, info.shape, {}, {}, dtype, {}};
        io::TensorToWrite asF32{name, info.shape, {}, {}, std::nullopt, {}};
        inDtype.stored.resize(values.size() * sizeof(uint16_t));
        for (std::size_t i = 0; i < values.size(); ++i) {
            const Rounded r = roundTo(dtype, values.values()[i]);
            std::memcpy(inDtype.stored.data() + i * sizeof r.bits, &r.bits, sizeof r.bits);
            asF32.f32.push_back(r.value);
        }
        stored.push_back(std::move(inDtype));
        widened.push_back(std::move(asF32));
    }
    const QString storedFolder = scratch.freshFolder(), f32Folder = scratch.freshFolder();
    for (const auto& [folder, tensors] :
         {std::pair{storedFolder, &stored}, {f32Folder, &widened}}) {
        io::writeSafetensors((folder + "/model.safetensors").toStdString(), *tensors);
        QFile::copy(golden + "/config.json", folder + "/config.json");
    }
    return {storedFolder, f32Folder};
}
} // namespace headlight::test
