// Trilu on the CPU, for any element size: per matrix row r, the kept columns are one contiguous
// run (upper: [r + k, cols), lower: [0, r + k]); they are copied and the rest zeroed (all-zero
// bytes are 0 in every dnnx dtype).
#include <algorithm>
#include <cstring>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct TriluPlan {
  int64_t matrices = 1, rows = 0, cols = 0;
  bool upper = true;
  bool has_k = false;  // a node without the k input has no inputs[1] to read
};

template <class E>
class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(TriluPlan p) : p_(p) {}
  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    const int64_t cols = p_.cols;
    // k clamped to where it still changes a row (so that r + k cannot overflow)
    const int64_t k = std::clamp<int64_t>(p_.has_k ? *args.in<int64_t>(1) : 0, -p_.rows - 1, cols + 1);
    for (int64_t m = 0; m < p_.matrices; ++m) {
      for (int64_t r = 0; r < p_.rows; ++r) {
        const int64_t row = (m * p_.rows + r) * cols;
        // kept columns [begin, end), clamped to the row
        const int64_t diag = r + k;
        const int64_t begin = p_.upper ? std::clamp<int64_t>(diag, 0, cols) : 0;
        const int64_t end = p_.upper ? cols : std::clamp<int64_t>(diag + 1, 0, cols);
        std::fill(y + row, y + row + begin, E(0));
        if (end > begin) std::memcpy(y + row + begin, x + row + begin, static_cast<size_t>(end - begin) * sizeof(E));
        std::fill(y + row + std::max(begin, end), y + row + cols, E(0));
      }
    }
  }

 private:
  TriluPlan p_;
};

KernelChoice plan_trilu(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  TriluPlan p;
  for (size_t d = 0; d + 2 < x.size(); ++d) p.matrices *= x[d];
  p.rows = x[x.size() - 2];
  p.cols = x[x.size() - 1];
  p.upper = node.attr_int("upper", 1) != 0;
  p.has_k = inputs.size() > 1 && inputs[1].present;
  KernelChoice choice;
  choice.algorithm = p.upper ? "upper rows" : "lower rows";
  choice.kernel = make_for_element_size<TriluKernel>(inputs[0].info.dtype, p);
  return choice;
}

}  // namespace

void register_cpu_trilu_kernels(KernelRegistry& r) { r.add("Trilu", plan_trilu); }

}  // namespace dnnx
