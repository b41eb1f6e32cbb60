// EyeLike on the CPU: y [rows, cols] zeroed, then 1 at (r, r + k) for every row whose diagonal
// cell lies inside the matrix.
#include <algorithm>
#include <cstring>

#include "backends/cpu/runtime/element_type.h"
#include "ops/shape/eye_like.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct EyeShape {
  int64_t rows = 0, cols = 0, k = 0;
};

template <class T>
class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(EyeShape s) : s_(s) {}
  void run(const KernelArgs& args) const override {
    T* y = args.out<T>(0);
    std::fill(y, y + s_.rows * s_.cols, T(0));
    // rows r with 0 <= r + k < cols
    const int64_t first = std::max<int64_t>(0, -s_.k);
    const int64_t last = std::min<int64_t>(s_.rows, s_.cols - s_.k);  // exclusive
    for (int64_t r = first; r < last; ++r) y[r * s_.cols + r + s_.k] = T(1);
  }

 private:
  EyeShape s_;
};

KernelChoice plan_eye_like(const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const EyeShape s{x[0], x[1], node.attr_int("k", 0)};
  KernelChoice choice;
  choice.algorithm = "fill diagonal";
  choice.kernel = with_number_or_bool(outputs[0].dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<EyeLikeKernel<decltype(t)>>(s);
  });
  return choice;
}

}  // namespace

void register_cpu_eye_like_kernels(KernelRegistry& r) { r.add("EyeLike", plan_eye_like).with_dtypes(number_types()); }

}  // namespace dnnx
