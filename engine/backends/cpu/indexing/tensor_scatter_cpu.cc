// TensorScatter on the CPU (ops/indexing/tensor_scatter.cc), any element type: past_cache viewed
// as [outer, max_seq, row] (outer: the dims before axis; row: the bytes of the dims after it) and
// update as [outer, seq, row]; present_cache is past_cache copied, then every update row one
// memcpy to its cache row. The write indices are read and checked as the kernel runs.
#include <cstring>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct ScatterPlan {
  int64_t outer = 0, per_batch = 1, max_seq = 0, seq = 0;
  size_t row_bytes = 0;
  bool circular = false, has_indices = false;
  std::string where;
};

class TensorScatterKernel final : public Kernel {
 public:
  explicit TensorScatterKernel(ScatterPlan p) : p_(std::move(p)) {}
  void run(const KernelArgs& args) const override {
    const auto* past = args.in<uint8_t>(0);
    const auto* update = args.in<uint8_t>(1);
    const int64_t* indices = p_.has_indices ? args.in<int64_t>(2) : nullptr;
    auto* present = args.out<uint8_t>(0);
    const size_t row = p_.row_bytes;
    const size_t total = static_cast<size_t>(p_.outer * p_.max_seq) * row;
    if (total) std::memcpy(present, past, total);
    for (int64_t o = 0; o < p_.outer; ++o) {
      const int64_t b = o / p_.per_batch;
      const int64_t start = indices ? indices[b] : 0;
      if (!p_.circular && (start < 0 || start + p_.seq > p_.max_seq)) {
        throw InputError(p_.where + ": write_indices[" + std::to_string(b) + "] = " + std::to_string(start) +
                         " with " + std::to_string(p_.seq) + " update rows leaves the cache's " +
                         std::to_string(p_.max_seq) + " (mode 'linear' needs 0 <= index <= " +
                         std::to_string(p_.max_seq - p_.seq) + ")");
      }
      for (int64_t s = 0; s < p_.seq; ++s) {
        int64_t at = start + s;
        if (p_.circular) at = ((at % p_.max_seq) + p_.max_seq) % p_.max_seq;  // Python's %, as onnx's reference
        std::memcpy(present + static_cast<size_t>(o * p_.max_seq + at) * row,
                    update + static_cast<size_t>(o * p_.seq + s) * row, row);
      }
    }
  }

 private:
  ScatterPlan p_;
};

KernelChoice plan_tensor_scatter(const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>&) {
  const Shape& past = inputs[0].info.shape;
  const int64_t rank = static_cast<int64_t>(past.size());
  const int64_t axis = normalize_axis(node, node.attr_int("axis", -2), rank);
  ScatterPlan p;
  p.outer = 1;
  for (int64_t d = 0; d < axis; ++d) p.outer *= past[d];
  p.per_batch = past[0] ? p.outer / past[0] : 1;
  p.max_seq = past[axis];
  p.seq = inputs[1].info.shape[axis];
  p.row_bytes = dtype_size(inputs[0].info.dtype);
  for (int64_t d = axis + 1; d < rank; ++d) p.row_bytes *= static_cast<size_t>(past[d]);
  p.circular = node.attr_string("mode", "linear") == "circular";
  p.has_indices = inputs.size() > 2 && inputs[2].present;
  p.where = node.where();
  KernelChoice choice;
  choice.algorithm = p.circular ? "row copy (circular)" : "row copy";
  choice.kernel = std::make_unique<TensorScatterKernel>(std::move(p));
  return choice;
}

}  // namespace

void register_cpu_tensor_scatter_kernels(KernelRegistry& r) {
  r.add("TensorScatter", plan_tensor_scatter).with_dtypes(movable_types());
}

}  // namespace dnnx
