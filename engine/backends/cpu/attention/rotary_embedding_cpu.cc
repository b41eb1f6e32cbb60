// RotaryEmbedding on the CPU (ops/attention/rotary_embedding.h): one pass over (b, s, h), each
// head's R/2 feature pairs rotated by the angles of position position_ids[b, s] (or (b, s)).
#include <algorithm>

#include "ops/attention/rotary_embedding.h"
#include "ops/op.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class RotaryKernel final : public Kernel {
 public:
  RotaryKernel(RotaryGeometry g, std::string where) : g_(g), where_(std::move(where)) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* cos = args.in<T>(1);
    const T* sin = args.in<T>(2);
    const int64_t* positions = g_.has_positions ? args.in<int64_t>(3) : nullptr;
    T* y = args.out<T>(0);
    const int64_t half = g_.rotary / 2;
    for (int64_t b = 0; b < g_.batch; ++b) {
      for (int64_t s = 0; s < g_.seq; ++s) {
        int64_t row = b * g_.seq + s;  // the caches' row for (b, s)
        if (positions) {
          row = positions[b * g_.seq + s];
          if (row < 0 || row >= g_.max_position) {
            throw InputError(where_ + ": position_ids[" + std::to_string(b) + ", " + std::to_string(s) + "] = " +
                             std::to_string(row) + " is outside the caches' " + std::to_string(g_.max_position) +
                             " positions");
          }
        }
        const T* c = cos + row * half;
        const T* sn = sin + row * half;
        for (int64_t h = 0; h < g_.heads; ++h) {
          const int64_t at = g_.packed ? ((b * g_.seq + s) * g_.heads + h) * g_.head
                                       : ((b * g_.heads + h) * g_.seq + s) * g_.head;
          rotate(x + at, c, sn, y + at);
        }
      }
    }
  }

 private:
  void rotate(const T* x, const T* c, const T* s, T* y) const {
    const int64_t half = g_.rotary / 2;
    for (int64_t k = 0; k < half; ++k) {
      const int64_t i1 = g_.interleaved ? 2 * k : k, i2 = g_.interleaved ? 2 * k + 1 : k + half;
      const T x1 = x[i1], x2 = x[i2];
      y[i1] = c[k] * x1 - s[k] * x2;
      y[i2] = s[k] * x1 + c[k] * x2;
    }
    std::copy(x + g_.rotary, x + g_.head, y + g_.rotary);
  }

  RotaryGeometry g_;
  std::string where_;
};

KernelChoice plan_rotary(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "direct";
  choice.kernel = std::make_unique<RotaryKernel<float>>(rotary_geometry(node, inputs), node.where());
  return choice;
}

}  // namespace

void register_cpu_rotary_embedding_kernels(KernelRegistry& r) { r.add("RotaryEmbedding", plan_rotary); }

}  // namespace dnnx
