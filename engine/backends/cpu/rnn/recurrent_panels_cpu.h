// The recurrent product of a batch-1 step from R^T packed once, at plan time, in column panels
// (recurrent_panels_cpu.cc, Note [recurrent panels]): out [n] = h [k] · R^T for R [n, k] as
// ONNX gives it ([G*H, H]), n = G*H outputs over k = H inputs.
#pragma once
#include <cstdint>
#include <memory>

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

}  // namespace dnnx
