// "Conv+MaxPool" and "Conv+Relu+MaxPool" (the fuse_conv_pool pass) on CUDA, two ways:
//   pair    the conv's own kernel (conv_cuda.cc: cuDNN, or the direct one-channel kernel) into a
//           buffer in the workspace, then the MaxPool's (pool_cuda.cc): what the unfused graph runs;
//   direct  one kernel computing each pooled output from the input (conv_pool_direct.h), fp32
//           storage only: a small problem then costs one launch instead of two library calls.
// The heuristic planner takes direct up to kDirectMacs multiply-adds (LeNet's conv2 + pool2 at
// batch 1: 17 + 4 us as the pair), and at any size where its one-input-channel path applies
// (direct_conv_pool_one_channel) or, up to 16 filters, its tiled path (direct_conv_pool_tiled:
// Note [narrow convolutions]); the exhaustive planner times both on scratch buffers and keeps
// the times in the plan cache, so that a second process times nothing.
#include <cudnn.h>

#include <climits>
#include <cstdio>

#include "backends/cuda/conv/window_2d.h"
#include "backends/cuda/conv/conv_pool_direct.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/search/pick.h"
#include "backends/cuda/search/plan_entries.h"
#include "backends/cuda/search/reasons.h"
#include "backends/cuda/search/search.h"
#include "backends/cuda/runtime/kernel_pair.h"
#include "ops/layout/channels_last.h"
#include "ops/conv/conv_geometry.h"
#include "ops/conv/conv_pool.h"

namespace dnnx::cuda {

namespace {

constexpr double kDirectMacs = 1 << 24;  // the heuristic's bound for the direct kernel

// Note [narrow convolutions]: a conv of few filters under a 2x2 pool at a large batch is narrow
// for cuDNN's implicit GEMMs (the filters are the GEMM's N), as a classifier head is for cuBLAS
// (Note [narrow Gemms] in gemm_cuda.cc). Measured on an H200 (bench/probes/probe_conv_pool_tiled.py,
// GPU times of the fused layer against cuDNN's heuristic conv + its pool, bench/RESULTS_CUDA.md):
// PyTorch LeNet-5's conv2 (6 -> 16, 5x5, 14x14) at batch 256 14.7 against 22.4 us; the CIFAR
// model's conv2 + Relu (12 -> 12, 5x5, 30x30) 27.6 against 49.1 at batch 64 and 94.6 against
// 151.3 at 256. With more filters cuDNN's tiles fill and the tiled path, bound by its loads of
// weights and patches, does not win: LeNet's conv2 (20 -> 50) 32.4 against 22.4 at batch 64,
// 47.7 against 47.9 at 256, 132 against 117 at 1024; a 3x3 32 -> 64 48.5 against 47.6. The tiled
// path therefore takes up to 16 filters (conv_pool_tiled_kernels.cu), where both planners take
// the direct kernel, the exhaustive one after timing it against the pair.
constexpr const char* kDirectName = "direct conv+pool kernel";
constexpr const char* kDirectMath = "fp32 (FMA, direct kernel)";

class DirectKernel final : public Kernel {
 public:
  DirectKernel(const CudaContext& ctx, DirectConvPool shape, bool has_bias, bool relu)
      : ctx_(ctx), shape_(shape), has_bias_(has_bias), relu_(relu) {}

  void run(const KernelArgs& args) const override {
    launch_direct_conv_pool(args.in(0), args.in(1), has_bias_ ? args.in(2) : nullptr, args.out(0), shape_, relu_,
                            ctx_.stream);
  }

 private:
  const CudaContext& ctx_;
  DirectConvPool shape_;
  bool has_bias_, relu_;
};

bool fits_int(std::initializer_list<int64_t> values) {
  for (int64_t v : values) {
    if (v < 0 || v > INT_MAX / 64) return false;
  }
  return true;
}

// The direct kernel's shape, or n == 0 with the reason it is not taken.
DirectConvPool direct_shape(const ConvPoolParts& parts, const std::vector<ValueInfo>& inputs,
                            const TensorInfo& inner, const TensorInfo& y, std::string& why_not) {
  DirectConvPool p;
  const Shape& xs = inputs[0].info.shape;
  const Shape& ws = inputs[1].info.shape;
  if (inputs[0].info.dtype != DType::Float32 || y.dtype != DType::Float32) {
    why_not = "fp32 storage only";
    return p;
  }
  if (xs.size() != 4) {
    why_not = "2-D convolutions only";
    return p;
  }
  const ConvGeometry c = make_conv_geometry(parts.conv, WindowOp::Conv, {xs[2], xs[3]}, {ws[2], ws[3]});
  const ConvGeometry q = make_conv_geometry(parts.pool, WindowOp::Pool, {inner.shape[2], inner.shape[3]},
                                            parts.pool.attr_ints("kernel_shape", {}));
  if (c.group != 1) {
    why_not = "grouped convolution";
    return p;
  }
  if (q.has_padding() || q.dilations[0] != 1 || q.dilations[1] != 1 || q.ceil_mode) {
    why_not = "the pool has pads, dilations or ceil_mode";
    return p;
  }
  if (!fits_int({xs[1], xs[2], xs[3], ws[0], c.kernel[0], c.kernel[1], c.strides[0], c.strides[1], c.dilations[0],
                 c.dilations[1], c.pads_begin[0], c.pads_begin[1], q.kernel[0], q.kernel[1], q.strides[0],
                 q.strides[1], y.shape[2], y.shape[3]})) {
    why_not = "dims too large";
    return p;
  }
  p.c = static_cast<int>(xs[1]);
  p.h = static_cast<int>(xs[2]);
  p.w = static_cast<int>(xs[3]);
  p.m = static_cast<int>(ws[0]);
  set_window_2d(p, c);
  p.pkh = static_cast<int>(q.kernel[0]);
  p.pkw = static_cast<int>(q.kernel[1]);
  p.psh = static_cast<int>(q.strides[0]);
  p.psw = static_cast<int>(q.strides[1]);
  p.poh = static_cast<int>(y.shape[2]);
  p.pow = static_cast<int>(y.shape[3]);
  p.n = xs[0];
  if (!direct_conv_pool_supported(p)) {
    why_not = "the filter or the pooled region does not fit in shared memory";
    p.n = 0;
  }
  return p;
}

// Which of the direct kernel's paths runs the shape (conv_pool_direct.h), as plan() names it.
std::string direct_path_note(const DirectConvPool& p) {
  if (direct_conv_pool_one_channel(p)) return ", 1 input channel";
  if (direct_conv_pool_tiled(p)) return ", tiled";
  return "";
}

// `algorithm` without the " (plan cache)" its conv half carries when read from the cache, so that a
// process reading the cache makes the same key as the one that wrote it.
std::string without_cache_note(std::string algorithm) {
  const std::string note = " (plan cache)";
  for (size_t at = algorithm.find(note); at != std::string::npos; at = algorithm.find(note)) {
    algorithm.erase(at, note.size());
  }
  return algorithm;
}

// The plan-cache key of the direct-or-pair choice: the GPU and cuDNN, the shapes, the Relu, the
// precision, and the pair's conv algorithm (its time depends on it).
std::string choice_key(const CudaContext& ctx, const DirectConvPool& p, bool relu, const KernelChoice& pair) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "conv+pool fwd | %s sm_%d cuDNN %zu | x %lldx%dx%dx%d | w %dx%dx%dx%d stride %d,%d dilation %d,%d "
                "pad %d,%d | pool %dx%d stride %d,%d -> %dx%d | relu %d | precision %d | direct%s | pair ",
                ctx.device_name.c_str(), ctx.compute_capability, cudnnGetVersion(), static_cast<long long>(p.n), p.c,
                p.h, p.w, p.m, p.c, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw, p.ph, p.pw, p.pkh, p.pkw, p.psh, p.psw, p.poh,
                p.pow, relu ? 1 : 0, static_cast<int>(ctx.options.precision), direct_path_note(p).c_str());
  return text + without_cache_note(pair.algorithm);
}

struct Timed {
  double direct_ms = -1, pair_ms = -1;
  bool from_cache = false;
};

// Both candidates' times: from the plan cache (a ConvPoolEntry), or measured on scratch buffers
// (the pair ranked first: Note [the pick]) and stored; nullopt for a search that times nothing
// ("background", Note [background search]) and finds no entry.
std::optional<Timed> time_both(const Search& search, const Kernel& direct, const KernelChoice& pair,
                               const DirectConvPool& p, bool relu, const std::vector<ValueInfo>& inputs,
                               const TensorInfo& y) {
  Timed t;
  const std::string key = search.caching() ? choice_key(search.context(), p, relu, pair) : "";
  if (!key.empty()) {
    if (const std::optional<ConvPoolEntry> hit =
            search.cached<ConvPoolEntry>(key, [](const ConvPoolEntry&) { return CacheVerdict::use(); })) {
      t.direct_ms = hit->direct_ms;
      t.pair_ms = hit->pair_ms;
      t.from_cache = true;
      return t;
    }
  }
  if (!search.timed()) return std::nullopt;
  std::vector<size_t> in_bytes;
  for (const ValueInfo& v : inputs) in_bytes.push_back(v.present ? v.info.bytes() : 0);
  search.count_timing_run();
  const std::vector<double> ms = search.time_on_scratch(
      {{pair.kernel.get(), in_bytes, {y.bytes()}, pair.scratch_bytes + pair.workspace_bytes},
       {&direct, in_bytes, {y.bytes()}, 0}},
      "timing the conv+pool pair and the direct kernel");
  t.pair_ms = ms[0];
  t.direct_ms = ms[1];
  if (!key.empty() && t.direct_ms >= 0 && t.pair_ms >= 0) {
    ConvPoolEntry entry;
    entry.direct = pick_fastest({t.pair_ms, t.direct_ms}, kStrictlyFaster) == 1;
    entry.direct_ms = t.direct_ms;
    entry.pair_ms = t.pair_ms;
    entry.direct_name = kDirectName;
    entry.pair_name = pair.algorithm;
    search.store(key, entry);
  }
  return t;
}

// The pair: the conv's and the pool's own factories, the conv's output in the workspace.
KernelChoice plan_pair(const KernelRegistry& registry, const ConvPoolParts& parts, const std::vector<ValueInfo>& inputs,
                       const TensorInfo& inner, const std::vector<TensorInfo>& outputs) {
  KernelChoice conv = (*registry.find(parts.conv.op_type))(parts.conv, inputs, {inner});
  ValueInfo pool_in;
  pool_in.info = inner;
  KernelChoice pool = (*registry.find(parts.pool.op_type))(parts.pool, {pool_in}, outputs);
  KernelChoice pair;
  pair.algorithm = conv.algorithm + ", then " + pool.algorithm;
  pair.math = conv.math;
  set_pair_buffers(pair, inner.bytes(), conv.workspace_bytes, pool.workspace_bytes);
  pair.time_ms = -1;
  pair.rejected = std::move(conv.rejected);
  for (Rejected& r : pool.rejected) pair.rejected.push_back(std::move(r));
  pair.kernel = std::make_unique<KernelPair>(std::move(conv.kernel), std::move(pool.kernel), inner.bytes());
  return pair;
}

// "Conv(+Relu)+MaxPool@NHWC" (Note [channels last]): the pair of channels-last kernels.
KernelChoice plan_conv_pool_nhwc(const KernelRegistry& registry, const Node& node, const std::vector<ValueInfo>& inputs,
                                 const std::vector<TensorInfo>& outputs) {
  Node base = node;
  base.op_type = channels_first_op(node.op_type);
  ConvPoolParts parts = split_conv_pool(base);
  parts.conv.op_type += kChannelsLastSuffix;
  parts.pool.op_type += kChannelsLastSuffix;
  const TensorInfo inner = op_registry().find(parts.conv.op_type)->infer(parts.conv, inputs)[0];
  KernelChoice pair = plan_pair(registry, parts, inputs, inner, outputs);
  pair.rejected.push_back({kDirectName, "the data is channels-last (the direct kernel reads NCHW)"});
  return pair;
}

KernelChoice plan_conv_pool(const KernelRegistry& registry, const CudaContext& ctx, const Node& node,
                            const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const ConvPoolParts parts = split_conv_pool(node);
  const TensorInfo inner = op_registry().find(parts.conv.op_type)->infer(parts.conv, inputs)[0];
  KernelChoice pair = plan_pair(registry, parts, inputs, inner, outputs);
  std::string why_not;
  const DirectConvPool shape = direct_shape(parts, inputs, inner, outputs[0], why_not);
  if (shape.n == 0) {
    pair.rejected.push_back({kDirectName, why_not});
    return pair;
  }
  const bool relu = parts.conv.op_type == "Conv+Relu";
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  auto direct = std::make_unique<DirectKernel>(ctx, shape, has_bias, relu);
  bool take_direct = false;
  std::string reason;
  const Search search(ctx);
  const std::optional<Timed> timed =
      search.timed() || search.caching() ? time_both(search, *direct, pair, shape, relu, inputs, outputs[0])
                                         : std::nullopt;
  if (timed) {
    const Timed& t = *timed;
    if (t.direct_ms < 0 || t.pair_ms < 0) {
      reason = "its scratch buffers could not be allocated at plan time (out of memory)";
    } else {
      take_direct = pick_fastest({t.pair_ms, t.direct_ms}, kStrictlyFaster) == 1;
      const std::string source = t.from_cache ? " (plan cache)" : "";
      reason = take_direct ? slower_than(t.pair_ms, "the direct kernel", t.direct_ms) + source
                           : slower_than(t.direct_ms, "the pair", t.pair_ms) + source;
      pair.time_ms = t.pair_ms;
      if (take_direct) pair.time_ms = t.direct_ms;
    }
  } else {
    const bool one_channel = direct_conv_pool_one_channel(shape);
    const bool tiled = direct_conv_pool_tiled(shape);
    take_direct = one_channel || tiled || shape.macs() <= kDirectMacs;
    char text[160];
    std::snprintf(text, sizeof(text), "%.3g multiply-adds %s the direct kernel's bound of %.3g", shape.macs(),
                  take_direct ? "within" : "over", kDirectMacs);
    reason = one_channel                         ? "one input channel: the direct kernel's one-channel path, at any batch"
             : tiled && shape.macs() > kDirectMacs ? "up to 16 filters under a 2x2 pool: the direct kernel's tiled path, at any batch"
                                                   : text;
  }
  if (!take_direct) {
    pair.rejected.push_back({kDirectName, reason});
    return pair;
  }
  KernelChoice choice;
  choice.kernel = std::move(direct);
  choice.algorithm = std::string(kDirectName) + direct_path_note(shape) +
                     (relu ? " (bias+relu+max pool fused)" : " (bias+max pool fused)");
  choice.math = kDirectMath;
  choice.time_ms = pair.time_ms;
  choice.rejected = {{"the conv+pool pair: " + pair.algorithm, reason}};
  return choice;
}

}  // namespace

void register_cuda_conv_pool_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"Conv+MaxPool", "Conv+Relu+MaxPool"}) {
    r.add(op, [&r, &ctx](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
      return plan_conv_pool(r, ctx, node, inputs, outputs);
    }).with_dtypes(kFloatAndHalves);  // the pair in half (the direct kernel is fp32 only)
    r.add(std::string(op) + kChannelsLastSuffix,
          [&r](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
            return plan_conv_pool_nhwc(r, node, inputs, outputs);
          })
        .with_dtypes(kFloatAndHalves)
        .refusing(channels_last_check(op, [](const Node& node) {
          const std::string why = symmetric_pads_reason(node, "");
          return why.empty() ? channels_last_max_pool_reason(node, kPoolAttrPrefix) : why;
        }));
  }
}

}  // namespace dnnx::cuda
