// Pad on CUDA, one of the real-world ops of issue #5: an index and copy kernel of any rank up to
// kMaxGlueDims (pad_kernels.cu), any element type. Constant mode: the value from the attribute
// (before opset 11) or the optional input, read on the device. Edge, reflect and wrap (issue
// #15): a gather of the x element each output element repeats. The gradient (every mode) is a
// gather too, each dX element summing the dY elements that copied it (Note [separable adjoint]).
#include <cstring>
#include <memory>

#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/train/separable_adjoint.h"
#include "ops/layout/pad.h"

namespace dnnx::cuda {

namespace {

constexpr int kPadsAsInputOpset = 11;
constexpr size_t kValueInput = 2;

PadDims pad_dims(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& out) {
  const Shape& x = inputs[0].info.shape;
  if (x.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than " + std::to_string(kMaxGlueDims) + " dims");
  }
  const PadAmounts pads = pad_amounts(node, inputs, x.size());
  PadDims dims;
  dims.rank = static_cast<int>(x.size());
  dims.mode = static_cast<int>(pad_mode(node));  // PadMode's order: constant, edge, reflect, wrap
  for (size_t d = 0; d < x.size(); ++d) {
    dims.in[d] = x[d];
    dims.out[d] = out[d];
    dims.begin[d] = pads.begin[d];
    dims.end[d] = pads.end[d];
  }
  return dims;
}

bool has_value_input(const Node& node, const std::vector<ValueInfo>& inputs) {
  return node.opset >= kPadsAsInputOpset && inputs.size() > kValueInput && inputs[kValueInput].present;
}

KernelChoice plan_pad(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                      const std::vector<TensorInfo>& outputs) {
  const DType dtype = inputs[0].info.dtype;
  const PadDims dims = pad_dims(node, inputs, outputs[0].shape);
  const bool value_input = has_value_input(node, inputs);
  uint64_t bits = 0;
  if (!value_input) {
    const float v = node.opset < kPadsAsInputOpset ? node.attr_float("value", 0.0f) : 0.0f;
    if (dtype == DType::Float32) {
      std::memcpy(&bits, &v, sizeof(float));
    } else if (is_half(dtype)) {  // float16's bits, or bfloat16's (float32's top half, rounded)
      bits = float_to_storage(v, dtype);
    } else if (dtype == DType::Int32) {
      const int32_t i = static_cast<int32_t>(v);
      std::memcpy(&bits, &i, sizeof(i));
    } else {
      const int64_t i = static_cast<int64_t>(v);
      std::memcpy(&bits, &i, sizeof(i));
    }
  }
  const size_t elem = dtype_size(dtype);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("pad kernel", [=](const KernelArgs& a) {
    launch_pad_nd(a.in<void>(0), a.out<void>(0), elem, n, dims, value_input ? a.in<void>(2) : nullptr, bits,
                  c->stream);
  });
}

// The adjoint's lists (Note [separable adjoint]): per dim, for each index of X, the output
// indices along it that read it (weight 1), in output order; the constant's cells read none.
AdjointReaders pad_readers(const Node& node, const PadDims& dims) {
  const PadMode mode = pad_mode(node);
  AdjointReaders readers(static_cast<size_t>(dims.rank));
  for (int d = 0; d < dims.rank; ++d) {
    readers[d].resize(static_cast<size_t>(dims.in[d]));
    for (int64_t o = 0; o < dims.out[d]; ++o) {
      const int64_t i = pad_source_index(mode, o, dims.in[d], dims.begin[d], dims.end[d]);
      if (i >= 0 && i < dims.in[d]) readers[d][i].emplace_back(o, 1.0f);
    }
  }
  return readers;
}

// dX: a gather over the lists, no atomics (every mode). A computed constant_value's gradient,
// the sum of dY over the constant's cells, still adds with atomics (its last bits may vary).
GradChoice plan_pad_grad(const GradRequest& r) {
  const PadDims dims = pad_dims(r.node, r.inputs, r.outputs[0].shape);
  const bool value_input = has_value_input(r.node, r.inputs);
  const Shape& x = r.inputs[0].info.shape;
  const int64_t n = numel(r.outputs[0].shape), x_size = numel(x);  // dY's and dX's elements
  const CudaContext* c = &cuda_context_of(r);
  auto lists = std::make_shared<SeparableAdjointLists>(*c, x, r.outputs[0].shape, pad_readers(r.node, dims));
  return make_grad_choice("pad gradient (adjoint as a gather)", [=](const GradArgs& a) {
    if (a.d_inputs[0]) launch_separable_adjoint(lists->view(), a.d_outputs[0], a.d_inputs[0], x_size, c->stream);
    if (value_input && a.d_inputs[kValueInput]) {
      launch_pad_value_grad(a.d_outputs[0], a.d_inputs[kValueInput], n, dims, c->stream);
    }
  });
}

}  // namespace

void register_cuda_pad_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Pad", bind(ctx, plan_pad)).with_dtypes(kFloatAndHalves).with_gradient(plan_pad_grad);
}

}  // namespace dnnx::cuda
