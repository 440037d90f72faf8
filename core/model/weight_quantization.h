#pragma once
// Weight-only int8 quantisation, `--weights int8` (never the default): every linear layer's
// weight [out, in] becomes int8 with one f32 scale per output channel, scale = max_j |w_ij| / 127
// and q_ij = round(w_ij / scale), so each row keeps its own range (Dettmers et al. 2022's
// vector-wise scaling, without the outlier split). Activations stay f32; the GEMM widens int8
// panels back to q · scale (io/stored_matrix.h). Embeddings, norms and biases are left as they
// are. A quarter of the f32 bytes and half of BF16's, at a cost each layer reports.

#include "model/checkpoint_layout.h"
#include "model/transformer.h"

#include <memory>
#include <string>
#include <vector>

namespace headlight {

// Per layer, the error the quantisation made: ‖W − Ŵ‖_F / ‖W‖_F over all its linear weights
// together (0 for a layer whose weights are all zero).
struct QuantizationReport {
    std::vector<double> layerRelativeError;
    double int8Bytes = 0.0; // the int8 weights and their scales
};

// Replaces every linear weight of `weights`' layers (q, k, v, o, the MLP and any experts' MLPs)
// with its int8 form, in memory; a mapped weight is read once and released.
QuantizationReport quantizeInt8(HostWeights& weights);

// loadModel (model/transformer.h), with quantizeInt8 applied before the upload.
std::unique_ptr<TransformerModel> loadModelInt8(const std::string& folder, Backend& backend,
                                                QuantizationReport* report = nullptr);
} // namespace headlight
