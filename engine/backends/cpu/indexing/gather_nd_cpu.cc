// GatherND on the CPU (ops/indexing/gather_nd.h), forward and gradient side by side:
//   forward   for each batch entry and tuple: one memcpy of the S-element slice the tuple names,
//             for any element size
//   gradient  dData zeroed, then each tuple's dY slice added into the slice it was read from
//             (tuples that name one slice twice add up)
// Indices are read and checked as the kernels run: one out of range is an InputError.
#include <algorithm>
#include <cstring>

#include "backends/cpu/indexing/index_read.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/indexing/gather_nd.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct GatherNDPlan {
  GatherNDGeometry g;
  std::vector<int64_t> strides;  // of the gathered dims, in elements of data
  DType index_type = DType::Int64;
  std::string where;
};

GatherNDPlan gather_nd_plan(const Node& node, const std::vector<ValueInfo>& inputs) {
  GatherNDPlan p;
  p.g = gather_nd_geometry(node, inputs[0].info.shape, inputs[1].info.shape);
  p.strides.assign(p.g.gathered.size(), p.g.slice);
  for (size_t d = p.g.gathered.size(); d-- > 1;) p.strides[d - 1] = p.strides[d] * p.g.gathered[d];
  p.index_type = inputs[1].info.dtype;
  p.where = node.where();
  return p;
}

// Calls fn(out_offset, data_offset) for each (batch entry, tuple), offsets in elements.
template <class Fn>
void each_slice(const GatherNDPlan& p, const void* indices, Fn&& fn) {
  const GatherNDGeometry& g = p.g;
  for (int64_t b = 0; b < g.batches; ++b) {
    for (int64_t t = 0; t < g.tuples; ++t) {
      const int64_t tuple = b * g.tuples + t;
      int64_t at = b * g.batch_stride;
      for (int64_t j = 0; j < g.k; ++j) {
        at += checked_index(p.where, read_index(indices, p.index_type, tuple * g.k + j), g.gathered[j]) * p.strides[j];
      }
      fn(tuple * g.slice, at);
    }
  }
}

template <class E>
class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(GatherNDPlan p) : p_(std::move(p)) {}
  void run(const KernelArgs& args) const override {
    const E* x = args.in<E>(0);
    E* y = args.out<E>(0);
    const size_t bytes = static_cast<size_t>(p_.g.slice) * sizeof(E);
    each_slice(p_, args.inputs[1], [&](int64_t o, int64_t i) { std::memcpy(y + o, x + i, bytes); });
  }

 private:
  GatherNDPlan p_;
};

KernelChoice plan_gather_nd(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "slice copy";
  choice.kernel = make_for_element_size<GatherNDKernel>(inputs[0].info.dtype, gather_nd_plan(node, inputs));
  return choice;
}

class GatherNDGradKernel final : public GradKernel {
 public:
  explicit GatherNDGradKernel(GatherNDPlan p) : p_(std::move(p)) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + p_.g.batches * p_.g.batch_stride, 0.0f);
    const int64_t s = p_.g.slice;
    each_slice(p_, args.inputs[1], [&](int64_t o, int64_t i) {
      for (int64_t e = 0; e < s; ++e) dx[i + e] += dy[o + e];
    });
  }

 private:
  GatherNDPlan p_;
};

GradChoice plan_gather_nd_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "slice scatter-add";
  choice.kernel = std::make_unique<GatherNDGradKernel>(gather_nd_plan(r.node, r.inputs));
  return choice;
}

}  // namespace

void register_cpu_gather_nd_kernels(KernelRegistry& r) {
  r.add("GatherND", plan_gather_nd).with_gradient(plan_gather_nd_grad);
}

}  // namespace dnnx
