// LRN on the CPU: per image, the squares of x go to the workspace once ([C, S]); each
// channel's window sum then adds whole planes, and y = x * (bias + alpha / size * sum)^-beta.
#include <algorithm>
#include <cmath>

#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct LrnParams {
  int64_t batch, channels, plane;  // x viewed as [N, C, S]
  int64_t size;
  float alpha, beta, bias;
};

class LrnKernel final : public Kernel {
 public:
  explicit LrnKernel(LrnParams p) : p_(p) {}

  // workspace: squares [C, S], then the window sum [S].
  void run(const KernelArgs& args) const override {
    const int64_t c_count = p_.channels, s = p_.plane;
    float* squares = static_cast<float*>(args.workspace);
    float* sum = squares + c_count * s;
    const float scale = p_.alpha / static_cast<float>(p_.size);
    const int64_t before = (p_.size - 1) / 2, after = p_.size / 2;  // floor and ceil of (size-1)/2
    for (int64_t n = 0; n < p_.batch; ++n) {
      const float* x = args.in(0) + n * c_count * s;
      float* y = args.out(0) + n * c_count * s;
      for (int64_t i = 0; i < c_count * s; ++i) squares[i] = x[i] * x[i];
      for (int64_t c = 0; c < c_count; ++c) {
        std::fill(sum, sum + s, 0.0f);
        const int64_t first = std::max<int64_t>(0, c - before), last = std::min(c_count - 1, c + after);
        for (int64_t k = first; k <= last; ++k) {
          const float* sq = squares + k * s;
          for (int64_t i = 0; i < s; ++i) sum[i] += sq[i];
        }
        for (int64_t i = 0; i < s; ++i) {
          y[c * s + i] = x[c * s + i] * std::pow(p_.bias + scale * sum[i], -p_.beta);
        }
      }
    }
  }

 private:
  LrnParams p_;
};

KernelChoice plan_lrn(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  LrnParams p;
  p.batch = x[0];
  p.channels = x[1];
  p.plane = p.batch * p.channels > 0 ? numel(x) / (p.batch * p.channels) : 0;
  p.size = node.attr_int("size", 1);
  p.alpha = node.attr_float("alpha", 1e-4f);
  p.beta = node.attr_float("beta", 0.75f);
  p.bias = node.attr_float("bias", 1.0f);
  KernelChoice choice;
  choice.algorithm = "direct";
  choice.workspace_bytes = static_cast<size_t>((p.channels + 1) * p.plane) * sizeof(float);
  choice.kernel = std::make_unique<LrnKernel>(p);
  return choice;
}

}  // namespace

void register_cpu_lrn_kernels(KernelRegistry& r) { r.add("LRN", plan_lrn); }

}  // namespace dnnx
