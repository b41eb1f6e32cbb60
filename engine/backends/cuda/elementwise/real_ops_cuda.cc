// The real-world ops of issue #5 on CUDA, float32 unless noted (real_ops_kernels.cu):
//   BatchNormalization (inference)  per-channel scale+shift, statistics read on the device
//   LeakyRelu, Elu, Clip            elementwise; Clip's min/max inputs read on the device
//   AveragePool                     direct kernel with ONNX's divisor (count_include_pad,
//                                   ceil_mode, dilations, asymmetric pads)
//   GlobalAveragePool/GlobalMaxPool one block per plane
//   LRN                             direct, alpha / size as ONNX means it
//   ReduceMean                      one thread per output element over the reduced dims
//   Pad (constant), Slice, Split, Expand, Gather, Cast: index and copy kernels, any element type
// Sum/Max/Min live with the binary kernels (binary_cuda.cc). Anything else is refused at plan
// time with an UnsupportedModelError naming the node.
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "backends/cuda/pool/max_pool_layout.h"
#include "ops/cast.h"
#include "ops/conv_geometry.h"
#include "ops/pad.h"
#include "ops/reduce.h"
#include "ops/slice.h"
#include "ops/split.h"

namespace dnnx::cuda {

namespace {

using Factory = std::function<KernelChoice(const Node&, const std::vector<ValueInfo>&, const std::vector<TensorInfo>&)>;

void require_cuda_float(const Node& node, const TensorInfo& t, const char* what) {
  if (t.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes float32 ") + what + ", not " +
                                               dtype_name(t.dtype));
  }
}

// float32, or float16 (precision="fp16"), and `expected` (the node's first input's type: the
// half_storage pass gives every float input of a half node float16).
void require_cuda_floating(const Node& node, const TensorInfo& t, DType expected, const char* what) {
  if (t.dtype != DType::Float16) {
    require_cuda_float(node, t, what);
  } else if (expected != DType::Float16) {
    node_fail<UnsupportedModelError>(node, std::string("the CUDA kernel takes ") + what + " of one float type, not " +
                                               dtype_name(t.dtype) + " with " + dtype_name(expected));
  }
}

// A kernel that is one lambda over the call's buffers.
class LambdaKernel final : public Kernel {
 public:
  explicit LambdaKernel(std::function<void(const KernelArgs&)> body) : body_(std::move(body)) {}
  void run(const KernelArgs& args) const override { body_(args); }

 private:
  std::function<void(const KernelArgs&)> body_;
};

KernelChoice make_choice(const char* algorithm, std::function<void(const KernelArgs&)> body) {
  KernelChoice choice;
  choice.algorithm = algorithm;
  choice.kernel = std::make_unique<LambdaKernel>(std::move(body));
  return choice;
}

// --- BatchNormalization ---
KernelChoice plan_batchnorm(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs) {
  if (outputs.size() > 1) node_fail<UnsupportedModelError>(node, "training mode (running mean/var outputs) is not supported on CUDA");
  const bool half = inputs[0].info.dtype == DType::Float16;  // then every input (half_storage)
  for (size_t i = 0; i < inputs.size(); ++i) require_cuda_floating(node, inputs[i].info, inputs[0].info.dtype, "inputs");
  const Shape& x = inputs[0].info.shape;
  if (x.size() < 2) node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has fewer than 2 dims");
  const int64_t batch = x[0], channels = x[1];
  const int64_t plane = batch * channels > 0 ? numel(x) / (batch * channels) : 0;
  const float eps = node.attr_float("epsilon", 1e-5f);
  if (node.attr_int("training_mode", 0) != 0) node_fail<UnsupportedModelError>(node, "training_mode=1 is not supported on CUDA");
  const CudaContext* c = &ctx;
  return make_choice("scale+shift kernel", [=](const KernelArgs& a) {
    launch_batchnorm(a.in<void>(0), a.in<void>(1), a.in<void>(2), a.in<void>(3), a.in<void>(4), a.out<void>(0), batch,
                     channels, plane, eps, half, c->stream);
  });
}

// --- LeakyRelu, Elu, Clip ---
Factory alpha_factory(const CudaContext& ctx, AlphaKind kind, float default_alpha) {
  return [&ctx, kind, default_alpha](const Node& node, const std::vector<ValueInfo>& inputs,
                                     const std::vector<TensorInfo>&) {
    const bool half = inputs[0].info.dtype == DType::Float16;
    require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
    const float alpha = node.attr_float("alpha", default_alpha);
    const int64_t n = numel(inputs[0].info.shape);
    const CudaContext* c = &ctx;
    return make_choice("elementwise kernel", [=](const KernelArgs& a) {
      launch_alpha_activation(kind, a.in<void>(0), a.out<void>(0), n, alpha, half, c->stream);
    });
  };
}

KernelChoice plan_clip(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  require_cuda_floating(node, outputs[0], outputs[0].dtype, "input (int32/int64 Clip runs on the CPU only)");
  const bool half = outputs[0].dtype == DType::Float16;  // then min and max too (half_storage)
  constexpr int kBoundsAsInputsOpset = 11;
  const bool attrs = node.opset < kBoundsAsInputsOpset;
  const bool min_input = !attrs && inputs.size() > 1 && inputs[1].present;
  const bool max_input = !attrs && inputs.size() > 2 && inputs[2].present;
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (attrs) {
    lo = node.attr_float("min", lo);
    hi = node.attr_float("max", hi);
  }
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("elementwise kernel", [=](const KernelArgs& a) {
    launch_clip(a.in<void>(0), a.out<void>(0), n, lo, hi, min_input ? a.in<void>(1) : nullptr,
                max_input ? a.in<void>(2) : nullptr, half, c->stream);
  });
}

// --- AveragePool, GlobalAveragePool, GlobalMaxPool, LRN ---
KernelChoice plan_avg_pool(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>&) {
  const bool half = inputs[0].info.dtype == DType::Float16;
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  const Shape& x = inputs[0].info.shape;
  const ConvGeometry onnx = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                               node.attr_ints("kernel_shape", {}));
  const Window3d w = pool_window(onnx, x);
  const ConvGeometry g = onnx.expanded_to(3);
  int64_t pad_end[3];
  for (size_t i = 0; i < 3; ++i) pad_end[i] = g.pads_end[i];
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("direct kernel", [=](const KernelArgs& a) {
    launch_avg_pool(a.in<void>(0), a.out<void>(0), w, pad_end, include_pad, half, c->stream);
  });
  choice.rejected.push_back({"cudnnPoolingForward", "the direct kernel follows ONNX's divisor for every geometry"});
  return choice;
}

Factory global_pool_factory(const CudaContext& ctx, bool max) {
  return [&ctx, max](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    const bool half = inputs[0].info.dtype == DType::Float16;  // float sums either way
    require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
    const Shape& x = inputs[0].info.shape;
    const int64_t planes = x.size() >= 2 ? x[0] * x[1] : 0;
    const int64_t plane = planes ? numel(x) / planes : 0;
    const CudaContext* c = &ctx;
    return make_choice("block reduction kernel", [=](const KernelArgs& a) {
      launch_global_pool(a.in<void>(0), a.out<void>(0), planes, plane, max, half, c->stream);
    });
  };
}

KernelChoice plan_lrn(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                      const std::vector<TensorInfo>&) {
  const bool half = inputs[0].info.dtype == DType::Float16;
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  const Shape& x = inputs[0].info.shape;
  const int64_t batch = x[0], channels = x[1];
  const int64_t plane = batch * channels > 0 ? numel(x) / (batch * channels) : 0;
  const int64_t size = node.attr_int("size", 1);
  const float alpha = node.attr_float("alpha", 1e-4f), beta = node.attr_float("beta", 0.75f),
              bias = node.attr_float("bias", 1.0f);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("direct kernel", [=](const KernelArgs& a) {
    launch_lrn(a.in<void>(0), a.out<void>(0), batch, channels, plane, size, alpha, beta, bias, half, c->stream);
  });
  choice.rejected.push_back({"cudnnLRNCrossChannelForward", "cuDNN's window is centred (size odd only) and its size is limited to [1, 16]"});
  return choice;
}

// --- ReduceMean ---
std::vector<int64_t> packed_strides(const Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) strides[d - 1] = strides[d] * s[d];
  return strides;
}

KernelChoice plan_reduce_mean(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                              const std::vector<TensorInfo>& outputs) {
  const bool half = inputs[0].info.dtype == DType::Float16;
  require_cuda_floating(node, inputs[0].info, inputs[0].info.dtype, "X");
  const Shape& x = inputs[0].info.shape;
  const ReduceAxes axes = reduce_axes(node, inputs, x);
  const std::vector<int64_t> strides = packed_strides(x);
  BroadcastDims out, red;
  int64_t count = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    BroadcastDims& dims = axes.reduced[d] ? red : out;
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than " + std::to_string(kMaxGlueDims) +
                                                 " non-unit dims on one side of the reduction");
    }
    dims.size[dims.rank] = x[d];
    dims.stride_a[dims.rank] = strides[d];
    ++dims.rank;
    if (axes.reduced[d]) count *= x[d];
  }
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("direct kernel", [=](const KernelArgs& a) {
    launch_reduce_mean(a.in<void>(0), a.out<void>(0), n, out, red, count, half, c->stream);
  });
}

// --- Pad (constant) ---
KernelChoice plan_pad(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                      const std::vector<TensorInfo>& outputs) {
  const std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant") node_fail<UnsupportedModelError>(node, "Pad mode '" + mode + "' is not supported on CUDA");
  const Shape& x = inputs[0].info.shape;
  const DType dtype = inputs[0].info.dtype;
  if (x.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than " + std::to_string(kMaxGlueDims) + " dims");
  }
  const PadAmounts pads = pad_amounts(node, inputs, x.size());
  PadDims dims;
  dims.rank = static_cast<int>(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    dims.in[d] = x[d];
    dims.out[d] = outputs[0].shape[d];
    dims.begin[d] = pads.begin[d];
  }
  constexpr int kPadsAsInputOpset = 11;
  const bool value_input = node.opset >= kPadsAsInputOpset && inputs.size() > 2 && inputs[2].present;
  uint64_t bits = 0;
  if (!value_input) {
    const float v = node.opset < kPadsAsInputOpset ? node.attr_float("value", 0.0f) : 0.0f;
    if (dtype == DType::Float32) {
      std::memcpy(&bits, &v, sizeof(float));
    } else if (dtype == DType::Float16) {
      bits = float_to_half(v);
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

// --- Slice, Expand: the strided gather (gather_kernels.cu) ---
KernelChoice plan_slice(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const SliceRanges r = slice_ranges(node, inputs, x);
  const std::vector<int64_t> strides = packed_strides(x);
  BroadcastDims dims;
  int64_t base = 0;
  for (size_t d = 0; d < x.size(); ++d) {
    if (r.out[d] == 0) continue;
    base += r.start[d] * strides[d];
    if (r.out[d] == 1) continue;
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "slice of " + shape_str(x) + " has more than " +
                                                 std::to_string(kMaxGlueDims) + " non-unit output dims");
    }
    dims.size[dims.rank] = r.out[d];
    dims.stride_a[dims.rank] = r.step[d] * strides[d];
    ++dims.rank;
  }
  if (dims.rank == 0) {  // one element
    dims.rank = 1;
    dims.size[0] = 1;
    dims.stride_a[0] = 1;
  }
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice("gather kernel", [=](const KernelArgs& a) {
    if (n == 0) return;
    launch_gather(a.in<uint8_t>(0) + base * static_cast<int64_t>(elem), a.out<void>(0), elem, n, dims, c->stream);
  });
}

KernelChoice plan_expand(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) {
  const Shape& x = inputs[0].info.shape;
  const Shape& y = outputs[0].shape;
  const std::vector<int64_t> strides = packed_strides(x);
  BroadcastDims dims;
  const size_t lead = y.size() - x.size();
  for (size_t d = 0; d < y.size(); ++d) {
    if (y[d] == 1) continue;
    const bool from_x = d >= lead && x[d - lead] == y[d];
    if (dims.rank == kMaxGlueDims) {
      node_fail<UnsupportedModelError>(node, "Expand to " + shape_str(y) + " has more than " +
                                                 std::to_string(kMaxGlueDims) + " non-unit dims");
    }
    dims.size[dims.rank] = y[d];
    dims.stride_a[dims.rank] = from_x ? strides[d - lead] : 0;
    ++dims.rank;
  }
  if (dims.rank == 0) {
    dims.rank = 1;
    dims.size[0] = 1;
    dims.stride_a[0] = 1;
  }
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const int64_t n = numel(y);
  const CudaContext* c = &ctx;
  return make_choice("broadcast gather kernel",
                     [=](const KernelArgs& a) { launch_gather(a.in<void>(0), a.out<void>(0), elem, n, dims, c->stream); });
}

// --- Split: Concat reversed, one 2-D copy per output ---
KernelChoice plan_split(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                        const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const SplitParts parts = split_parts(node, inputs, x);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < parts.axis; ++d) outer *= x[d];
  for (size_t d = static_cast<size_t>(parts.axis) + 1; d < x.size(); ++d) inner *= x[d];
  const size_t elem = dtype_size(inputs[0].info.dtype);
  std::vector<size_t> chunks;
  size_t row = 0;
  for (int64_t s : parts.sizes) {
    chunks.push_back(static_cast<size_t>(s * inner) * elem);
    row += chunks.back();
  }
  const CudaContext* c = &ctx;
  return make_choice("cudaMemcpy2DAsync per output", [=](const KernelArgs& a) {
    const uint8_t* src = a.in<uint8_t>(0);
    size_t column = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
      uint8_t* y = a.out<uint8_t>(i);
      if (y && chunks[i] && outer) {
        check(cudaMemcpy2DAsync(y, chunks[i], src + column, row, chunks[i], static_cast<size_t>(outer),
                                cudaMemcpyDeviceToDevice, c->stream),
              "cudaMemcpy2DAsync");
      }
      column += chunks[i];
    }
  });
}

// --- Gather, Cast ---
KernelChoice plan_gather(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) inner *= x[d];
  const int64_t size = x[axis], count = numel(inputs[1].info.shape);
  const bool idx64 = inputs[1].info.dtype == DType::Int64;
  if (!idx64 && inputs[1].info.dtype != DType::Int32) {
    node_fail<UnsupportedModelError>(node, std::string("indices of type ") + dtype_name(inputs[1].info.dtype));
  }
  const size_t elem = dtype_size(inputs[0].info.dtype);
  const CudaContext* c = &ctx;
  KernelChoice choice = make_choice("gather kernel", [=](const KernelArgs& a) {
    launch_gather_axis(a.in<void>(0), a.out<void>(0), elem, a.in<void>(1), idx64, outer, size, count, inner,
                       c->stream);
  });
  choice.rejected.push_back({"range check", "an index out of range gives zeros on CUDA (the CPU raises)"});
  return choice;
}

// launch_cast's codes (glue_kernels.h).
int dtype_code(DType t) {
  switch (t) {
    case DType::Float32: return 0;
    case DType::Int32: return 1;
    case DType::Int64: return 2;
    case DType::Float16: return 3;
  }
  return 0;
}

KernelChoice plan_cast(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>& outputs) {
  const DType from = inputs[0].info.dtype, to = cast_target(node);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  if (from == to) {
    const size_t bytes = static_cast<size_t>(n) * dtype_size(from);
    return make_choice("copy", [=](const KernelArgs& a) {
      if (bytes) {
        check(cudaMemcpyAsync(a.out<void>(0), a.in<void>(0), bytes, cudaMemcpyDeviceToDevice, c->stream),
              "cudaMemcpyAsync");
      }
    });
  }
  const int f = dtype_code(from), t = dtype_code(to);
  const bool convert = from == DType::Float16 || to == DType::Float16;  // the edges of half storage
  KernelChoice choice = make_choice(convert ? "convert kernel" : "cast kernel", [=](const KernelArgs& a) {
    launch_cast(a.in<void>(0), f, a.out<void>(0), t, n, c->stream);
  });
  if (convert) {
    choice.math = std::string(dtype_name(from)) + " -> " + dtype_name(to) +
                  (to == DType::Float16 ? " (round to nearest even)" : " (exact)");
  }
  return choice;
}

template <class Plan>
KernelFactory bind(const CudaContext& ctx, Plan plan) {
  return [&ctx, plan](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
    return plan(ctx, node, inputs, outputs);
  };
}

}  // namespace

void register_cuda_real_ops_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("BatchNormalization", bind(ctx, plan_batchnorm));
  r.add("LeakyRelu", alpha_factory(ctx, AlphaKind::LeakyRelu, 0.01f));
  r.add("Elu", alpha_factory(ctx, AlphaKind::Elu, 1.0f));
  r.add("Clip", bind(ctx, plan_clip));
  r.add("AveragePool", bind(ctx, plan_avg_pool));
  r.add("GlobalAveragePool", global_pool_factory(ctx, false));
  r.add("GlobalMaxPool", global_pool_factory(ctx, true));
  r.add("LRN", bind(ctx, plan_lrn));
  r.add("ReduceMean", bind(ctx, plan_reduce_mean));
  r.add("Pad", bind(ctx, plan_pad));
  r.add("Slice", bind(ctx, plan_slice));
  r.add("Expand", bind(ctx, plan_expand));
  r.add("Split", bind(ctx, plan_split));
  r.add("Gather", bind(ctx, plan_gather));
  r.add("Cast", bind(ctx, plan_cast));
}

}  // namespace dnnx::cuda
