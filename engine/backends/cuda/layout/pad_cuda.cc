// Pad on CUDA, one of the real-world ops of issue #5: an index and copy kernel of any rank up to
// kMaxGlueDims (pad_kernels.cu), any element type. Constant mode: the value from the attribute
// (before opset 11) or the optional input, read on the device. Edge, reflect and wrap (issue
// #15): a gather of the x element each output element repeats. The gradient (every mode) adds
// dY back to the elements it copies, with atomic adds.
#include <cstring>

#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/layout/glue_kernels.h"
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

// dX (and a computed constant_value's gradient): every mode, float32, atomic adds.
GradChoice plan_pad_grad(const GradRequest& r) {
  const PadDims dims = pad_dims(r.node, r.inputs, r.outputs[0].shape);
  const bool value_input = has_value_input(r.node, r.inputs);
  const int64_t n = numel(r.outputs[0].shape), x_size = numel(r.inputs[0].info.shape);
  const CudaContext* c = &cuda_context_of(r);
  return make_grad_choice("pad gradient (scatter, atomic adds)", [=](const GradArgs& a) {
    launch_pad_grad_nd(a.d_outputs[0], a.d_inputs[0], value_input ? a.d_inputs[kValueInput] : nullptr, n, x_size,
                       dims, c->stream);
  });
}

}  // namespace

void register_cuda_pad_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Pad", bind(ctx, plan_pad)).with_dtypes(kFloatAndHalves).with_gradient(plan_pad_grad);
}

}  // namespace dnnx::cuda
