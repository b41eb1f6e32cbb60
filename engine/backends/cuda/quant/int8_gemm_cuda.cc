// Int8Gemm and Int8MatMul on CUDA (ops/quant/qdq_int8.cc has their inputs; the CPU kernel,
// backends/cpu/quant/qdq_int8_cpu.cc, their arithmetic): cuBLASLt's int8 GEMM on the tensor
// cores into int32 sums, then the requantizing epilogue (int8_kernels.h), two launches:
//   x [rows, K] (int8/uint8; MatMul's leading dims flattened into rows)
//   --(int8_rows: x' of Note [int8 on tensor cores], K padded to k_pad)-->  xs [rows, k_pad] int8
//   --(Int8LtGemm with w' [m_pad, k_pad], made at plan time)-->            sums [rows, m_pad] int32
//   --(epilogue: zero point, bias, scales, Relu; requantized or float)-->  y [rows, M]
// The copy is skipped where X is int8 already, K a multiple of 4 and X 16-byte aligned. Where
// cuBLASLt has no algorithm, or the weights do not fit int8 after their zero point, the planner
// runs the layer on the host (Note [host fallback]) with the reason in plan().
#include <cstdint>

#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/quant/int8_layer.h"
#include "backends/cuda/quant/int8_lt_gemm.h"

namespace dnnx::cuda {

namespace {

using namespace int8_slot;

constexpr int64_t round4(int64_t v) { return (v + 3) / 4 * 4; }
constexpr size_t round256(size_t v) { return (v + 255) / 256 * 256; }

struct GemmShape {
  int64_t rows = 0, k = 0, channels = 0;  // x [rows, k], y [rows, channels]
  int64_t k_pad = 0, m_pad = 0;
  bool trans_b = false;  // w [channels, k] (Gemm's transB), else [k, channels]
};

class Int8GemmKernel final : public Kernel {
 public:
  Int8GemmKernel(const CudaContext& ctx, GemmShape s, Int8Layer layer, DeviceMemory w, std::unique_ptr<Int8LtGemm> gemm)
      : ctx_(ctx), s_(s), layer_(std::move(layer)), channels_(ctx, layer_), w_(std::move(w)), gemm_(std::move(gemm)) {}

  // Workspace: xs [rows, k_pad] int8, then the sums [rows, m_pad] int32, then cuBLASLt's.
  size_t x_bytes() const { return round256(static_cast<size_t>(s_.rows * s_.k_pad)); }
  size_t sums_bytes() const { return round256(static_cast<size_t>(s_.rows * s_.m_pad) * sizeof(int32_t)); }
  size_t workspace_bytes() const { return x_bytes() + sums_bytes() + gemm_->workspace_bytes(); }

  void run(const KernelArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* xs = reinterpret_cast<int8_t*>(ws);
    auto* sums = reinterpret_cast<int32_t*>(ws + x_bytes());
    const void* x = args.in<void>(kX);
    const bool aligned = reinterpret_cast<uintptr_t>(x) % kInt8GemmAlignment == 0;
    if (layer_.x_unsigned || s_.k != s_.k_pad || !aligned) {
      launch_int8_rows(x, layer_.x_unsigned, s_.rows, s_.k, s_.k_pad, xs, ctx_.stream);
      x = xs;
    }
    gemm_->run(ctx_, static_cast<const int8_t*>(x), static_cast<const int8_t*>(w_.get()), sums,
               ws + x_bytes() + sums_bytes());
    const void* z = nullptr;  // Int8Gemm and Int8MatMul take no residual
    launch_int8_epilogue(channels_.epilogue(layer_, sums, s_.rows, s_.m_pad, 0, z), args.out<void>(0), ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  GemmShape s_;
  Int8Layer layer_;
  Int8Channels channels_;
  DeviceMemory w_;  // w' [m_pad, k_pad] int8
  std::unique_ptr<Int8LtGemm> gemm_;
};

KernelChoice plan_int8_gemm(const CudaContext& ctx, bool matmul, const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  std::string why = int8_constants_refusal(inputs);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  if (inputs.size() > kZ && inputs[kZ].present) node_fail<UnsupportedModelError>(node, "a residual on a GEMM");
  const Shape& x = inputs[kX].info.shape;
  const Shape& w = inputs[kW].info.shape;
  GemmShape s;
  s.trans_b = !matmul && node.attr_int("transB", 0) != 0;
  s.k = x.back();
  s.rows = s.k > 0 ? numel(x) / s.k : 0;
  s.channels = s.trans_b ? w[0] : w[1];
  s.k_pad = round4(s.k);
  s.m_pad = round4(s.channels);
  if (s.rows == 0 || s.k == 0 || s.channels == 0) node_fail<UnsupportedModelError>(node, "an empty int8 GEMM");
  SignedWeights sw;
  const int64_t k = s.k, m = s.channels;
  const bool trans_b = s.trans_b;
  why = signed_weights(inputs, m, s.m_pad, k, s.k_pad,
                       [=](int64_t c, int64_t i) { return trans_b ? c * k + i : i * m + c; }, sw);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  auto gemm = std::make_unique<Int8LtGemm>();
  why = gemm->plan(ctx, s.rows, s.m_pad, s.k_pad, ctx.options.workspace_limit);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, "cuBLASLt int8 GEMM: " + why);
  Int8Layer layer = int8_layer(node, inputs, outputs, s.channels);
  subtract_zero_point_sums(layer, sw.sums);
  DeviceMemory wd = upload(ctx, sw.values.data(), sw.values.size(), "cudaMemcpyAsync (int8 weights)");
  const std::string types = int8_types_name(inputs);
  const std::string math = int8_math(layer, outputs);
  const bool relu = layer.epilogue.relu;
  auto kernel = std::make_unique<Int8GemmKernel>(ctx, s, std::move(layer), std::move(wd), std::move(gemm));
  KernelChoice choice;
  choice.algorithm = "cublasLt " + types + " gemm (int8 tensor cores, IMMA) + requantize epilogue" +
                     (relu ? " + relu" : "");
  choice.math = math;
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cuda_int8_gemm_kernels(KernelRegistry& r, const CudaContext& ctx) {
  // The 8-bit activations and weights, int32 biases (a device type), float32 scales and outputs.
  const std::vector<DType> stored = {DType::Float32, DType::Int8, DType::UInt8};
  r.add("Int8Gemm", [&ctx](const Node& n, const std::vector<ValueInfo>& i, const std::vector<TensorInfo>& o) {
     return plan_int8_gemm(ctx, false, n, i, o);
   }).with_dtypes(stored).refusing(int8_clip_refusal);
  r.add("Int8MatMul", [&ctx](const Node& n, const std::vector<ValueInfo>& i, const std::vector<TensorInfo>& o) {
     return plan_int8_gemm(ctx, true, n, i, o);
   }).with_dtypes(stored).refusing(int8_clip_refusal);
}

}  // namespace dnnx::cuda
