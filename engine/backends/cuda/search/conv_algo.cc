#include "backends/cuda/search/conv_algo.h"

#include <algorithm>
#include <chrono>

#include "backends/cuda/search/conv_cache_key.h"
#include "backends/cuda/search/conv_candidates.h"
#include "backends/cuda/search/plan_entries.h"
#include "backends/cuda/search/search.h"

namespace dnnx::cuda {

Precision conv_precision(Precision model, DType data) {
  return half_precision(model) && !is_half(data) ? Precision::Fp32 : model;
}

Precision conv_precision(const CudaContext& ctx, const ConvDescriptors& d) {
  if (!half_precision(ctx.options.precision)) return ctx.options.precision;
  cudnnDataType_t type{};
  int rank = 0, dims[CUDNN_DIM_MAX] = {}, strides[CUDNN_DIM_MAX] = {};
  check(cudnnGetTensorNdDescriptor(d.x, CUDNN_DIM_MAX, &type, &rank, dims, strides), "cudnnGetTensorNdDescriptor");
  return type == CUDNN_DATA_FLOAT ? Precision::Fp32 : ctx.options.precision;
}

cudnnMathType_t conv_math_type(Precision precision) {
  return precision == Precision::Fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

std::string conv_algo_name(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "algo " + std::to_string(static_cast<int>(algo));
  }
}

std::string conv_math_name(cudnnMathType_t math, Precision precision) {
  if (half_precision(precision)) {  // half data: the tensor ops take fp16 or bf16 operands as stored
    const std::string storage = half_storage_name(precision_half_type(precision));
    if (math == CUDNN_FMA_MATH) return storage + " storage, fp32 arithmetic (CUDNN_FMA_MATH)";
    return storage + " storage, tensor ops, fp32 accumulation (CUDNN_TENSOR_OP_MATH)";
  }
  switch (math) {
    case CUDNN_FMA_MATH: return "fp32 (CUDNN_FMA_MATH)";
    case CUDNN_TENSOR_OP_MATH: return "tf32 (CUDNN_TENSOR_OP_MATH)";
    case CUDNN_DEFAULT_MATH: return "fp32, TF32 permitted (CUDNN_DEFAULT_MATH)";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "fp16 conversion (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)";
    default: return "math type " + std::to_string(static_cast<int>(math));
  }
}

// Note [auto search]: algo_search="auto" (the default) times a convolution's candidates, as
// "exhaustive" does (the plan cache included), where that was measured to pay, and takes
// cuDNN's ranking elsewhere. Measured on an H200 (cuDNN 9.19, bench_resnet_cuda.py, 2026-12-03),
// ResNet-50 at batch 256: at fp32 the timed choice took 47.99 ms against the heuristic's 53.02
// with a 4 GiB workspace (60.98 against 66.05 with 256 MiB), while at tf32, fp16 and bf16 it
// gained nothing or lost (12.00 against 11.96, 9.87 against 9.03, 8.67 against 7.90 ms: the
// tensor-op kernels are close, and times taken alone misrank them inside the replayed graph). So
// "auto" times the FMA convolutions (fp32 math, conv_precision) of at least kAutoTimedFlops,
// which take some 70 us or more each, where a few percent repay the search's tens of
// milliseconds within a few thousand runs; smaller ones (LeNet, any model at batch 1) and every
// other kind (cuBLASLt, the conv+pool kernels) stay heuristic. The 3x3 layers' fastest fp32
// algorithms (FFT, Winograd) need workspace: where the model names no workspace_limit, a model
// gets kAutoFp32Workspace (4 GiB: the measured row), at most an eighth of the device's memory
// (or of memory_limit), at every precision (Note [tensor-op workspace], below).
// A fine-tuning step's backward convolutions (dX, dW) are timed under "auto" at every size in fp32:
// a tuning run takes thousands of steps, so the search's milliseconds at finetune() are repaid
// by the first hundred or so. LeNet's every-layer step at batch 256 (H100, session 21): cuDNN's
// heuristic pair for conv2's backward took 170 us, the timed one 107 us (the step 377 against
// 334 us).
constexpr double kAutoTimedFlops = 4e9;
constexpr size_t kAutoFp32Workspace = size_t{4} << 30;
constexpr size_t kHalfWorkspace = size_t{256} << 20;

namespace {

// 2 * the multiply-adds of the conv of `d`: its output's elements times one filter's (the same
// count in every direction, whose descriptors keep the forward shapes).
double conv_flops(const ConvDescriptors& d) {
  cudnnDataType_t type{};
  cudnnTensorFormat_t format{};
  int rank = 0, dims[CUDNN_DIM_MAX] = {}, strides[CUDNN_DIM_MAX] = {};
  check(cudnnGetTensorNdDescriptor(d.y, CUDNN_DIM_MAX, &type, &rank, dims, strides), "cudnnGetTensorNdDescriptor");
  double flops = 2;
  for (int i = 0; i < rank; ++i) flops *= dims[i];
  check(cudnnGetFilterNdDescriptor(d.w, CUDNN_DIM_MAX, &type, &format, &rank, dims), "cudnnGetFilterNdDescriptor");
  for (int i = 1; i < rank; ++i) flops *= dims[i];  // C/group and the window
  return flops;
}

}  // namespace

bool conv_search_timed(const CudaContext& ctx, const ConvDescriptors& d, ConvDirection dir) {
  switch (ctx.options.algo_search) {
    case AlgoSearch::Exhaustive: return true;
    case AlgoSearch::Heuristic: return false;
    case AlgoSearch::Background: return false;  // cached exhaustive choices, else heuristic (search.cc)
    case AlgoSearch::Auto: break;
  }
  if (conv_precision(ctx, d) != Precision::Fp32) return false;
  return dir != ConvDirection::Forward || conv_flops(d) >= kAutoTimedFlops;
}

size_t auto_workspace_limit(const DeviceOptions& options, size_t device_memory) {
  // Note [tensor-op workspace]: tf32, fp16 and bf16 had 256 MiB, and R3D-18's 3x3x3 convs at
  // batch 64 then lost IMPLICIT_PRECOMP_GEMM (392 MiB) to IMPLICIT_GEMM at 24 ms each (113 ms in
  // all at tf32; 17.8 ms with 4 GiB; H100, 2026-12-05): every precision gets the fp32 rule.
  const size_t memory = options.memory_limit ? std::min(options.memory_limit, device_memory) : device_memory;
  return std::max(kHalfWorkspace, std::min(kAutoFp32Workspace, memory / 8));
}

namespace {

// Why the model's precision forbids this math type ("" when it allows it). fp32 runs FMA
// kernels only; tf32 adds TF32 tensor ops but never a down-conversion to fp16; bf16 never one
// either (fp16's range is far narrower than bfloat16's).
std::string math_forbidden(Precision precision, cudnnMathType_t math) {
  if (math == CUDNN_FMA_MATH) return "";
  if (precision == Precision::Fp32) return "tensor-op math (TF32); precision fp32 allows FMA math only";
  if (precision == Precision::Fp16) return "";  // the data are half already: nothing narrows further
  if (precision == Precision::Bf16 && math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) {
    return "down-converts to fp16; precision bf16 keeps bfloat16's range";
  }
  if (math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return "down-converts to fp16; precision tf32 allows TF32 at most";
  return "";
}

// Why this candidate cannot be taken ("" when it can); `workspace` gets its exact need.
std::string disqualify(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, const ConvCandidate& perf,
                       size_t workspace_limit, size_t& workspace) {
  const std::string name = conv_algo_name(dir, perf.algo);
  if (ctx.hooks.failure_of(name) == ForcedFailure::NotSupported) {
    return "not supported (failure forced by DNNX_TEST_FAIL_ALGO)";
  }
  if (ctx.avoided(name)) return "failed at run time (the run-time fallback)";
  const std::string math = math_forbidden(conv_precision(ctx, d), perf.math_type);
  if (!math.empty()) return math;
  set_candidate_math(ctx, d, perf.math_type);
  const cudnnStatus_t query = conv_workspace_size(ctx, dir, d, perf.algo, &workspace);
  // First the limit: an exhaustive search does not even try a candidate that needs more.
  if (query == CUDNN_STATUS_SUCCESS && workspace > workspace_limit) {
    return "needs " + mib_text(workspace) + " of workspace, over the limit of " + mib_text(workspace_limit);
  }
  if (perf.status != CUDNN_STATUS_SUCCESS) return std::string("cuDNN: ") + status_name(perf.status);
  if (query != CUDNN_STATUS_SUCCESS) return std::string("cuDNN workspace query: ") + status_name(query);
  if (ctx.options.deterministic && perf.determinism == CUDNN_NON_DETERMINISTIC) {
    return "not deterministic (deterministic=True)";
  }
  return "";
}

// Whether the candidate's workspace can be allocated now: the fallback's second test, after
// cuDNN's own answer. An out-of-memory candidate gives way to the next, which usually needs less.
// The workspace is held in the context's search scratch (Note [search scratch]): the next layer
// most often needs no more, and then nothing is allocated. Where the scratch cannot grow to it,
// all of it goes and the workspace is tried alone, as before the scratch was kept.
bool workspace_allocates(const CudaContext& ctx, const std::string& name, size_t workspace) {
  if (ctx.hooks.failure_of(name) == ForcedFailure::OutOfMemory) return false;
  StatsClock clock(*ctx.stats, "search_seconds: scratch");
  SearchScratch& scratch = *ctx.search_scratch;
  if (scratch.hold(ctx, SearchScratch::kWorkspace, workspace)) return true;
  if (scratch.busy()) return false;
  scratch.release();
  return scratch.hold(ctx, SearchScratch::kWorkspace, workspace);
}

// Why a cached choice may not be used for `d` ("" when it may): cuDNN must still accept its
// algorithm for these descriptors with the same workspace, within the limit, at this precision.
std::string revalidate(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                       const ConvAlgoEntry& cached, size_t workspace_limit) {
  const int algo = cached.algo;
  const std::string name = conv_algo_name(dir, algo);
  const auto math = static_cast<cudnnMathType_t>(cached.math_type);
  if (ctx.hooks.failure_of(name) != ForcedFailure::None) return name + " fails (forced by DNNX_TEST_FAIL_ALGO)";
  if (ctx.avoided(name)) return name + " failed at run time";
  const std::string forbidden = math_forbidden(conv_precision(ctx, d), math);
  if (!forbidden.empty()) return forbidden;
  set_candidate_math(ctx, d, math);
  size_t workspace = 0;
  const cudnnStatus_t query = conv_workspace_size(ctx, dir, d, algo, &workspace);
  if (query != CUDNN_STATUS_SUCCESS) return name + " is refused now (cuDNN: " + status_name(query) + ")";
  if (workspace != cached.workspace_bytes) {
    return name + " now needs " + std::to_string(workspace) + " bytes of workspace, the entry says " +
           std::to_string(cached.workspace_bytes);
  }
  if (workspace > workspace_limit) return "its workspace is over the limit";
  return "";
}

ConvSearchChoice choice_from_cache(const ConvAlgoEntry& cached) {
  ConvSearchChoice choice;
  choice.algo = cached.algo;
  choice.math_type = static_cast<cudnnMathType_t>(cached.math_type);
  choice.workspace_bytes = cached.workspace_bytes;
  choice.time_ms = cached.time_ms;
  choice.from_cache = true;
  choice.rejected = cached.rejected;
  return choice;
}

ConvAlgoEntry cache_entry(ConvDirection dir, const ConvSearchChoice& choice, Precision precision) {
  ConvAlgoEntry e;
  e.algo = choice.algo;
  e.math_type = static_cast<int>(choice.math_type);
  e.workspace_bytes = choice.workspace_bytes;
  e.time_ms = choice.time_ms;
  e.algorithm = conv_algo_name(dir, choice.algo);
  e.math = conv_math_name(choice.math_type, precision);
  e.rejected = choice.rejected;
  return e;
}

// Takes the first candidate that qualifies; `fell_back` tells whether one failed for want of
// memory or by a forced failure (such a choice is not cached: it reflects this moment).
ConvSearchChoice select(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, bool timed,
                        const std::vector<ConvCandidate>& perfs, size_t workspace_limit, const std::vector<Rejected>& notes,
                        bool& fell_back) {
  ConvSearchChoice choice;
  for (const Rejected& n : notes) choice.rejected.emplace_back(n.algorithm, n.reason);
  bool chosen = false;
  for (const ConvCandidate& perf : perfs) {
    const std::string name = conv_algo_name(dir, perf.algo);
    if (chosen) {
      if (perf.status != CUDNN_STATUS_SUCCESS) continue;
      const std::string winner = conv_algo_name(dir, choice.algo);
      const bool near_tie = timed && perf.time < choice.time_ms;  // Note [warm conv timing]
      choice.rejected.emplace_back(name,
                                   !timed     ? "ranked below " + winner + " by cuDNN's heuristic"
                                   : near_tie ? within_near_tie(perf.time, winner, choice.time_ms) +
                                                    ", which cuDNN's heuristic ranks higher"
                                              : slower_than(perf.time, winner, choice.time_ms),
                                   timed ? perf.time : -1);
      continue;
    }
    size_t workspace = 0;
    const std::string why = disqualify(ctx, dir, d, perf, workspace_limit, workspace);
    if (!why.empty()) {
      fell_back = fell_back || why.find("DNNX_TEST_FAIL_ALGO") != std::string::npos;
      choice.rejected.emplace_back(name, why);
      continue;
    }
    if (!workspace_allocates(ctx, name, workspace)) {
      fell_back = true;
      choice.rejected.emplace_back(name, "its workspace of " + mib_text(workspace) +
                                             " could not be allocated at plan time (out of memory)");
      continue;
    }
    choice.algo = perf.algo;
    choice.math_type = run_math(conv_precision(ctx, d), perf.math_type);
    choice.workspace_bytes = workspace;
    if (timed) choice.time_ms = perf.time;
    chosen = true;
  }
  if (!chosen) {
    std::string reasons;
    for (const TimedRejected& r : choice.rejected) reasons += "; " + r.algorithm + ": " + r.reason;
    throw DeviceError(std::string("no cuDNN convolution algorithm qualifies for the ") + direction_text(dir) +
                      " direction (workspace limit " + mib_text(workspace_limit) + ")" +
                      reasons);
  }
  return choice;
}

}  // namespace

// The math type a candidate runs with: fp32 keeps FMA (no candidate may widen it); tf32 keeps
// the CUDNN_TENSOR_OP_MATH it asked for unless the candidate is an FMA-only kernel. (cuDNN 9
// reports the candidates of a tensor-op descriptor as CUDNN_DEFAULT_MATH, which on sm_80 and
// later would also allow TF32, but only by default: the plan names what was asked for.)
cudnnMathType_t run_math(Precision precision, cudnnMathType_t reported) {
  if (precision == Precision::Fp32 || reported == CUDNN_FMA_MATH) return CUDNN_FMA_MATH;
  return CUDNN_TENSOR_OP_MATH;
}

// Sets the math type the candidate would run with on the descriptor (its workspace may depend
// on it); fp32 leaves the descriptor at FMA.
void set_candidate_math(const CudaContext& ctx, const ConvDescriptors& d, cudnnMathType_t reported) {
  const Precision precision = conv_precision(ctx, d);
  if (precision == Precision::Fp32) return;
  check(cudnnSetConvolutionMathType(d.conv, run_math(precision, reported)), "cudnnSetConvolutionMathType");
}

ConvSearchChoice choose_conv_algorithm(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                                       size_t workspace_limit, const std::string& layer) {
  const auto start = std::chrono::steady_clock::now();
  const Search search(ctx, conv_search_timed(ctx, d, dir));
  const std::string key = search.caching() ? conv_cache_key(ctx, d, workspace_limit, dir) : "";
  ConvSearchChoice choice;
  // A cached choice that cuDNN still accepts, but whose workspace cannot be had now, is kept for
  // later and searched around (the fallback then keeps this choice out of the cache).
  const std::optional<ConvAlgoEntry> cached = search.cached<ConvAlgoEntry>(key, [&](const ConvAlgoEntry& e) {
    const std::string why = revalidate(ctx, dir, d, e, workspace_limit);
    if (!why.empty()) {
      return CacheVerdict::stale(layer + ": a stale plan-cache entry (" + e.algorithm + ") was dropped: " + why +
                                 "; the algorithm was searched again");
    }
    return workspace_allocates(ctx, e.algorithm, e.workspace_bytes) ? CacheVerdict::use() : CacheVerdict::not_now();
  });
  if (cached) {
    choice = choice_from_cache(*cached);
  } else {
    bool fell_back = false;
    if (search.timed()) {
      const TimedCandidates timed_perfs = timed_candidates(search, dir, d, workspace_limit);
      fell_back = !timed_perfs.notes.empty();
      choice = select(ctx, dir, d, true, timed_perfs.perfs, workspace_limit, timed_perfs.notes, fell_back);
    } else {
      choice = select(ctx, dir, d, false, heuristic_candidates(ctx, dir, d), workspace_limit, {}, fell_back);
    }
    if (search.caching() && !fell_back) search.store(key, cache_entry(dir, choice, conv_precision(ctx, d)));
  }
  set_candidate_math(ctx, d, choice.math_type);
  search.count_seconds_since(start);
  return choice;
}

ConvAlgoChoice choose_conv_algorithm(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit,
                                     const std::string& layer) {
  ConvSearchChoice c = choose_conv_algorithm(ctx, ConvDirection::Forward, d, workspace_limit, layer);
  ConvAlgoChoice choice;
  choice.algo = static_cast<cudnnConvolutionFwdAlgo_t>(c.algo);
  choice.math_type = c.math_type;
  choice.workspace_bytes = c.workspace_bytes;
  choice.time_ms = c.time_ms;
  choice.from_cache = c.from_cache;
  choice.rejected = std::move(c.rejected);
  return choice;
}

}  // namespace dnnx::cuda
