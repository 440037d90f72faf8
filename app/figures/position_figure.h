#pragma once
// The position-encoding view: which encoding the current model and variant use, drawn as what a
// token at each position receives. Learned (the checkpoint's table) and sinusoidal: the table,
// position × dimension, and the cosine similarity between positions. RoPE: the rotation angle of
// each position and frequency, and the relative score pattern (2/d)·Σ_k cos((i − j)·ω_k).
// ALiBi: the bias of every head against distance, and the selected head's bias matrix.

#include "figure_builders.h"
#include "figures/panels.h"

namespace headlight::app {

enum class PositionEncoding { None, Learned, Sinusoidal, Rope, Alibi, T5, TransformerXl };

// The encoding a pass of `model` with `variant` uses.
PositionEncoding positionEncoding(const LoadedModel& model, const variants::VariantSpec& variant);

// Positions drawn: the text's length, but at least kMinPositions so a short sentence still shows
// the encoding's structure.
constexpr int kMinPositions = 64;

render::PanelsFigure positionFigure(const ForwardResult& result, const ViewState& state);
} // namespace headlight::app
