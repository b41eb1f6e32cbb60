// DFT (opset 17: axis attribute; 20: axis input, default -2) and STFT (opset 17).
//   DFT   x [..., n, ..., 1 or 2] (real, or complex as (re, im)), dft_length L (optional scalar,
//         default: n, or 2 (n - 1) for an inverse onesided DFT), axis -> y of x's shape with the
//         axis dim L (onesided: L/2 + 1) and last dim 2. inverse: the 1/L-scaled inverse DFT;
//         inverse and onesided: the real inverse of a one-sided spectrum (numpy's irfft), last
//         dim 1. The sequence is cut or zero-padded to L.
//   STFT  signal [B, T, 1 or 2], frame_step, window [W] (optional), frame_length (optional) ->
//         [B, frames, bins, 2], frames = (T - L) / frame_step + 1 with L = frame_length or W;
//         frame f is signal[f * frame_step + n] * window[n], its DFT of length L;
//         bins = L/2 + 1 when onesided (the default), else L.
// Lengths, axis and frame_step are known when planning (value inputs).
#pragma once
#include "ops/op.h"

namespace dnnx {

struct DftGeometry {
  int64_t outer = 1, inner = 1;  // dims before the axis, dims after it (the complex dim left out)
  int64_t in_len = 0, length = 0, out_len = 0;
  bool in_complex = false, inverse = false, onesided = false;
  bool real_out() const { return inverse && onesided; }
};

DftGeometry dft_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

struct StftGeometry {
  int64_t batch = 0, signal_len = 0, step = 0, length = 0, frames = 0, bins = 0;
  bool in_complex = false, has_window = false;
};

StftGeometry stft_geometry(const Node& node, const std::vector<ValueInfo>& inputs);

}  // namespace dnnx
