// The recurrent product of a batch-1 step from R^T packed once, at plan time, in column panels
// (recurrent_panels_cpu.cc, Note [recurrent panels]): out [n] = h [k] · R^T for R [n, k] as
// ONNX gives it ([G*H, H]), n = G*H outputs over k = H inputs.
#pragma once
#include <cstdint>
#include <memory>

#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "ops/op.h"

namespace dnnx {

// Whether the panels' AVX-512 product runs here: AVX-512F, and recurrent_vectorized() (AVX2 and
// FMA, DNNX_RNN_PORTABLE unset).
bool recurrent_panels_available();

// R^T [k, n] in panels of up to kRecurrentPanelWidth columns, each panel [k, width rounded up to
// 16] (zeros past n), the panels one after another, 64-byte aligned.
class RecurrentPanels {
 public:
  RecurrentPanels() = default;
  RecurrentPanels(int64_t n, int64_t k, const float* r);  // r [n, k]

  bool empty() const { return !data_; }
  // out [n] = h [k] · R^T. Each output is summed over k in order, one FMA per input: its bits
  // depend on k only, so any split of the directions across threads gives the same results.
  void product(const float* h, float* out) const;

 private:
  struct Free {
    void operator()(float* p) const;
  };
  int64_t n_ = 0, k_ = 0;
  std::unique_ptr<float[], Free> data_;
};

// What a recurrent node (LSTM, GRU, RNN) packs at plan time, where its weights are float32
// constants that no trainer changes (Note [mutable constants]):
// - R, for the panels above: the constant's data, or null;
const float* recurrent_constant_weights(const ValueInfo& v);
// - W, for X·W^T [rows, input] x [input, width] on the packed tiles (Note [lstm projection] in
//   lstm_cpu.cc; W [width, input] as the product's B [N, K], a bias [width] as its input 2), or
//   an empty PackedProduct: sgemm.
PackedProduct plan_recurrent_projection(int64_t rows, int64_t input, int64_t width, const ValueInfo& w, bool has_bias);

}  // namespace dnnx
