// ReverseSequence on the CPU, for any element size: x viewed as [time, batch, inner] or
// [batch, time, inner]; every (t, b) row of `inner` elements is one memcpy, from step
// len - 1 - t for t < len and from step t otherwise.
#include <cstring>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct ReversePlan {
  int64_t time = 0, batch = 0, inner = 1;
  bool batch_major = false;  // [batch, time, inner] when batch_axis = 0
  std::string where;
};

template <class E>
class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(ReversePlan p) : p_(std::move(p)) {}
  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    const int64_t* lens = args.in<int64_t>(1);
    E* y = args.out<E>(0);
    const size_t bytes = static_cast<size_t>(p_.inner) * sizeof(E);
    for (int64_t b = 0; b < p_.batch; ++b) {
      const int64_t len = lens[b];
      if (len < 0 || len > p_.time) {
        throw InputError(p_.where + ": sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                         " is outside [0, " + std::to_string(p_.time) + "]");
      }
      for (int64_t t = 0; t < p_.time; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        std::memcpy(y + row(t, b), x + row(from, b), bytes);
      }
    }
  }

 private:
  int64_t row(int64_t t, int64_t b) const {
    return (p_.batch_major ? b * p_.time + t : t * p_.batch + b) * p_.inner;
  }
  ReversePlan p_;
};

KernelChoice plan_reverse_sequence(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  ReversePlan p;
  p.batch_major = node.attr_int("batch_axis", 1) == 0;
  p.batch = x[p.batch_major ? 0 : 1];
  p.time = x[p.batch_major ? 1 : 0];
  for (size_t d = 2; d < x.size(); ++d) p.inner *= x[d];
  p.where = node.where();
  KernelChoice choice;
  choice.algorithm = "row copy";
  choice.kernel = make_for_element_size<ReverseSequenceKernel>(inputs[0].info.dtype, std::move(p));
  return choice;
}

}  // namespace

void register_cpu_reverse_sequence_kernels(KernelRegistry& r) { r.add("ReverseSequence", plan_reverse_sequence); }

}  // namespace dnnx
