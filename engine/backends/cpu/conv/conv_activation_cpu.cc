// Note [conv activation epilogue]: the fused activations run as a second, vectorized pass over
// an output row or tile the kernel has just stored (so it is in L1), not inside each kernel's
// register epilogue: one function serves the GEMM, direct, winograd and depthwise paths, and the
// unfused op's separate pass over the whole tensor (and its second buffer) is what it saves.
#include "backends/cpu/conv/conv_activation_cpu.h"

#include <algorithm>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/elementwise/hard_swish_cpu.h"
#include "backends/cpu/elementwise/sigmoid_rows_cpu.h"
#include "backends/cpu/runtime/fast_math.h"

namespace dnnx {

namespace {

DNNX_VECTOR_CLONES_AVX512 void clip_rows(float lo, float hi, float* y, int64_t n) {
  // onnxruntime's Clip: min(max(x, lo), hi); NaN passes through as std::min/max keep their first argument.
  for (int64_t i = 0; i < n; ++i) {
    float v = y[i];
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    y[i] = v;
  }
}

}  // namespace

void apply_conv_activation(const ConvActivation& act, float* y, int64_t n) {
  switch (act.kind) {
    case ConvActivationKind::None: return;
    case ConvActivationKind::Clip: clip_rows(act.lo, act.hi, y, n); return;
    case ConvActivationKind::HardSwish: hard_swish_rows(y, y, n); return;
    case ConvActivationKind::Swish: swish_rows(y, n); return;
  }
}

}  // namespace dnnx
