// Concat's gradient: each input's dX is its slice of dY. Viewed as [outer, chunk] rows (as the
// forward kernel does), input i's row o is the bytes of dY's row o after inputs 0..i-1.
#include <cstring>

#include "runtime/kernel_registry.h"
#include "ops/layout/concat.h"

namespace dnnx {

namespace {

class ConcatGradKernel final : public GradKernel {
 public:
  ConcatGradKernel(int64_t outer, std::vector<int64_t> chunks) : outer_(outer), chunks_(std::move(chunks)) {
    for (int64_t c : chunks_) row_ += c;
  }

  void run(const GradArgs& args) const override {
    const float* dy = args.d_outputs[0];
    int64_t at = 0;
    for (size_t i = 0; i < chunks_.size(); at += chunks_[i], ++i) {
      float* dx = args.d_inputs[i];
      if (!dx) continue;
      for (int64_t o = 0; o < outer_; ++o) {
        std::memcpy(dx + o * chunks_[i], dy + o * row_ + at, static_cast<size_t>(chunks_[i]) * sizeof(float));
      }
    }
  }

 private:
  int64_t outer_;
  std::vector<int64_t> chunks_;  // floats per outer row, per input
  int64_t row_ = 0;              // floats per outer row of dY
};

GradChoice plan_concat_grad(const GradRequest& r) {
  const Shape& out = r.outputs[0].shape;
  const int64_t axis = concat_axis(r.node, static_cast<int64_t>(out.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < out.size(); ++d) inner *= out[d];
  std::vector<int64_t> chunks;
  for (const ValueInfo& in : r.inputs) chunks.push_back(in.present ? in.info.shape[axis] * inner : 0);
  GradChoice choice;
  choice.algorithm = "row copy";
  choice.kernel = std::make_unique<ConcatGradKernel>(outer, std::move(chunks));
  return choice;
}

}  // namespace

void register_cpu_concat_grad_kernels(KernelRegistry& r) { r.at("Concat").with_gradient(plan_concat_grad); }

}  // namespace dnnx
