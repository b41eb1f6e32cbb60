// QuantizeLinear and DequantizeLinear on CUDA (quant_kernels.cu; ops/quant/quantize_linear.cc has
// their meaning): float32 (or int32) x and float32 scales, to and from int8, uint8, int16 and
// uint16 (and DequantizeLinear's int32), per tensor, per axis or blocked, with onnxruntime's
// arithmetic. These are the first CUDA kernels that store 8- and 16-bit integers: the backend's
// type check lets a node hold a type its entry lists (CudaBackend::plan_node), so a QDQ file
// keeps its quantize/dequantize pairs on the device and the float ops between them on their
// device kernels. The float8 and 4-bit types, and half scales, run on the host (Note [host
// fallback]); the int8 layers themselves (Note [qdq int8]) run on int8 tensor cores
// (int8_gemm_cuda.cc, int8_conv_cuda.cc), so the pairs left are those at the float layers' edges.
//
// Note [device dequantize at half precision]: at fp16 and bf16 these nodes run on the device too
// (their float side stays float32: the half rewrite converts around them). The crash sweep on an
// H100 (2026-12-05) found zoo2/q_dyn_bert.onnx failing at fp16 and bf16 once they had moved to the
// device: its embedding Gather (a host layer on uint8 weights) read half data where its int64 ids
// should be. The cause was not in these kernels: the load-time precision choice profiles the
// plan, and the profile's replays read inputs whose arena blocks later layers had reused (Note
// [profiled inputs] in runtime/device_runner.cc, fixed since); the DequantizeLinear on the device
// had changed the arena's layout so that the ids' block was reused.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/quant/quant_kernels.h"
#include "ops/quant/quant_layout.h"

namespace dnnx::cuda {

namespace {

// The device integer type of `t` (`what` names the tensor); any other is refused: the node runs
// on the host.
QuantInt quant_int(const Node& node, DType t, const char* what, bool int32_ok) {
  switch (t) {
    case DType::Int8: return QuantInt::Int8;
    case DType::UInt8: return QuantInt::UInt8;
    case DType::Int16: return QuantInt::Int16;
    case DType::UInt16: return QuantInt::UInt16;
    case DType::Int32:
      if (int32_ok) return QuantInt::Int32;
      break;
    default: break;
  }
  node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes an 8- or 16-bit integer ") + what +
                                             ", not " + dtype_name(t));
}

bool has_zero_point(const std::vector<ValueInfo>& inputs) { return inputs.size() > 2 && inputs[2].present; }

QuantLayout layout_of(const Node& node, const std::vector<ValueInfo>& inputs) {
  require_cuda_float(node, inputs[1].info, "scale");
  const bool zp = has_zero_point(inputs);
  return quant_layout(node, inputs[0].info.shape, inputs[1].info.shape, zp ? &inputs[2].info.shape : nullptr);
}

KernelChoice plan_quantize(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>& outputs) {
  const bool x_int32 = inputs[0].info.dtype == DType::Int32;
  if (!x_int32) require_cuda_float(node, inputs[0].info, "x");
  const QuantInt type = quant_int(node, outputs[0].dtype, "y", false);
  const QuantLayout layout = layout_of(node, inputs);
  const bool zp = has_zero_point(inputs);
  const CudaContext* c = &ctx;
  return make_choice("quantize kernel", [=](const KernelArgs& a) {
    launch_quantize(a.in<void>(0), x_int32, a.in<float>(1), zp ? a.in<void>(2) : nullptr, a.out<void>(0), type, layout,
                    c->stream);
  });
}

KernelChoice plan_dequantize(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                             const std::vector<TensorInfo>& outputs) {
  const QuantInt type = quant_int(node, inputs[0].info.dtype, "x", true);
  require_cuda_float(node, outputs[0], "y");
  const QuantLayout layout = layout_of(node, inputs);
  const bool zp = has_zero_point(inputs);
  const CudaContext* c = &ctx;
  return make_choice("dequantize kernel", [=](const KernelArgs& a) {
    launch_dequantize(a.in<void>(0), a.in<float>(1), zp ? a.in<void>(2) : nullptr, a.out<float>(0), type, layout,
                      c->stream);
  });
}

}  // namespace

void register_cuda_quantize_linear_kernels(KernelRegistry& r, const CudaContext& ctx) {
  const std::vector<DType> stored = {DType::Float32, DType::Int8, DType::UInt8, DType::Int16, DType::UInt16};
  r.add("QuantizeLinear", bind(ctx, plan_quantize)).with_dtypes(stored);
  r.add("DequantizeLinear", bind(ctx, plan_dequantize)).with_dtypes(stored);
}

}  // namespace dnnx::cuda
