#include "backends/cuda/conv/conv_direction.h"

#include <mutex>
#include <unordered_map>
#include <utility>

#include "backends/cuda/search/conv_algo.h"
#include "backends/cuda/search/conv_cache_key.h"

namespace dnnx::cuda {

namespace {

template <class Perf>
ConvCandidate candidate_of(const Perf& p) {
  ConvCandidate c;
  c.algo = static_cast<int>(p.algo);
  c.status = p.status;
  c.time = p.time;
  c.determinism = p.determinism;
  c.math_type = p.mathType;
  return c;
}

template <class Perf>
std::vector<ConvCandidate> candidates_of(const std::vector<Perf>& perfs, int returned) {
  std::vector<ConvCandidate> out;
  for (int i = 0; i < returned; ++i) out.push_back(candidate_of(perfs[static_cast<size_t>(i)]));
  return out;
}

}  // namespace

// How many algorithms cuDNN knows for `dir`: the size of the perf array its queries fill.
int conv_algo_count(const CudaContext& ctx, ConvDirection dir) {
  int max_count = 0;
  switch (dir) {
    case ConvDirection::Forward:
      check(cudnnGetConvolutionForwardAlgorithmMaxCount(ctx.cudnn, &max_count),
            "cudnnGetConvolutionForwardAlgorithmMaxCount");
      break;
    case ConvDirection::BackwardData:
      check(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(ctx.cudnn, &max_count),
            "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
      break;
    case ConvDirection::BackwardFilter:
      check(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(ctx.cudnn, &max_count),
            "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
      break;
  }
  return max_count;
}

namespace {

// One cuDNN Get (heuristic) or Find (timed) algorithm query for `dir`, best first: `query(max_count,
// &returned, perfs)` makes the call into a Perf array of conv_algo_count entries.
template <class Perf, class Query>
std::vector<ConvCandidate> ranked_candidates(const CudaContext& ctx, ConvDirection dir, const Query& query) {
  const int max_count = conv_algo_count(ctx, dir);
  std::vector<Perf> perfs(static_cast<size_t>(max_count));
  int returned = 0;
  query(max_count, &returned, perfs.data());
  return candidates_of(perfs, returned);
}

std::string bwd_data_name(int algo) {
  switch (static_cast<cudnnConvolutionBwdDataAlgo_t>(algo)) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "BWD_DATA_ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "BWD_DATA_ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "BWD_DATA_FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "BWD_DATA_FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "BWD_DATA_WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "BWD_DATA_WINOGRAD_NONFUSED";
    default: return "bwd data algo " + std::to_string(algo);
  }
}

std::string bwd_filter_name(int algo) {
  switch (static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo)) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "BWD_FILTER_ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "BWD_FILTER_ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "BWD_FILTER_FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "BWD_FILTER_ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD: return "BWD_FILTER_WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "BWD_FILTER_WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "BWD_FILTER_FFT_TILING";
    default: return "bwd filter algo " + std::to_string(algo);
  }
}

}  // namespace

const char* direction_text(ConvDirection dir) {
  switch (dir) {
    case ConvDirection::Forward: return "fwd";
    case ConvDirection::BackwardData: return "bwd data";
    case ConvDirection::BackwardFilter: return "bwd filter";
  }
  return "?";
}

std::string conv_algo_name(ConvDirection dir, int algo) {
  switch (dir) {
    case ConvDirection::Forward: return conv_algo_name(static_cast<cudnnConvolutionFwdAlgo_t>(algo));
    case ConvDirection::BackwardData: return bwd_data_name(algo);
    case ConvDirection::BackwardFilter: return bwd_filter_name(algo);
  }
  return "?";
}

namespace {

// Note [conv query memo]: cuDNN 9 answers its legacy queries (cudnnGet*Algorithm_v7, the
// workspace sizes) by finalizing an execution plan per engine on the host, and some engines ask
// cuBLASLt for its heuristic in turn. A cold load of ResNet-50 at batch 256 spent more host time
// there than in cudnnFind's runs (py-spy, an H100, 2026-12-06: 649 samples in
// cudnnGetConvolutionForwardAlgorithm_v7 against 360 in Find), asking again for every layer of
// the same shape and again for each candidate's workspace at each step of the choice. The
// answers depend on the descriptors (the math type included) and the device alone, so the
// process keeps them, keyed by both (conv_descriptor_text); a layer of a shape seen before, in
// this model or another, asks cuDNN nothing. Only the queries themselves are kept: what the
// planner makes of them (limits, precision, determinism, the plan cache) is decided each time.
struct ConvQueryMemo {
  std::mutex mutex;
  std::unordered_map<std::string, std::vector<ConvCandidate>> ranked;
  std::unordered_map<std::string, std::pair<cudnnStatus_t, size_t>> workspace;
};

ConvQueryMemo& conv_query_memo() {
  static ConvQueryMemo* memo = new ConvQueryMemo;  // never destroyed: planning may outlive static teardown
  return *memo;
}

// The memo's answer under `key` in `table` (one of conv_query_memo's), else query()'s, kept; the
// query's time is counted under `counter` (Note [search parts]).
template <class Value, class Query>
Value memoized(std::unordered_map<std::string, Value>& table, const std::string& key, const CudaContext& ctx,
               const char* counter, const Query& query) {
  std::mutex& mutex = conv_query_memo().mutex;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = table.find(key);
    if (it != table.end()) return it->second;
  }
  Value value;
  {
    const StatsClock clock(*ctx.stats, counter);
    value = query();  // a cuDNN error throws: nothing kept
  }
  std::lock_guard<std::mutex> lock(mutex);
  table.emplace(key, value);
  return value;
}

std::string memo_key(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d) {
  return std::to_string(ctx.options.device) + " " + ctx.device_name + " sm_" + std::to_string(ctx.compute_capability) +
         " | " + conv_descriptor_text(d, dir);
}

cudnnStatus_t query_workspace_size(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, int algo,
                                   size_t* bytes) {
  switch (dir) {
    case ConvDirection::Forward:
      return cudnnGetConvolutionForwardWorkspaceSize(ctx.cudnn, d.x, d.w, d.conv, d.y,
                                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), bytes);
    case ConvDirection::BackwardData:
      return cudnnGetConvolutionBackwardDataWorkspaceSize(ctx.cudnn, d.w, d.y, d.conv, d.x,
                                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), bytes);
    case ConvDirection::BackwardFilter:
      return cudnnGetConvolutionBackwardFilterWorkspaceSize(ctx.cudnn, d.x, d.y, d.conv, d.w,
                                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), bytes);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

std::vector<ConvCandidate> query_heuristic_candidates(const CudaContext& ctx, ConvDirection dir,
                                                      const ConvDescriptors& d) {
  switch (dir) {
    case ConvDirection::Forward: {
      auto query = [&](int max_count, int* returned, cudnnConvolutionFwdAlgoPerf_t* perfs) {
        check(cudnnGetConvolutionForwardAlgorithm_v7(ctx.cudnn, d.x, d.w, d.conv, d.y, max_count, returned, perfs),
              "cudnnGetConvolutionForwardAlgorithm_v7");
      };
      return ranked_candidates<cudnnConvolutionFwdAlgoPerf_t>(ctx, dir, query);
    }
    case ConvDirection::BackwardData: {
      auto query = [&](int max_count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perfs) {
        check(cudnnGetConvolutionBackwardDataAlgorithm_v7(ctx.cudnn, d.w, d.y, d.conv, d.x, max_count, returned, perfs),
              "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      };
      return ranked_candidates<cudnnConvolutionBwdDataAlgoPerf_t>(ctx, dir, query);
    }
    case ConvDirection::BackwardFilter: {
      auto query = [&](int max_count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perfs) {
        check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(ctx.cudnn, d.x, d.y, d.conv, d.w, max_count, returned,
                                                            perfs),
              "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      };
      return ranked_candidates<cudnnConvolutionBwdFilterAlgoPerf_t>(ctx, dir, query);
    }
  }
  return {};
}

}  // namespace

cudnnStatus_t conv_workspace_size(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, int algo,
                                  size_t* bytes) {
  const auto [status, size] =
      memoized(conv_query_memo().workspace, memo_key(ctx, dir, d) + " | algo " + std::to_string(algo), ctx,
               "search_seconds: workspace sizes", [&] {
                 size_t need = 0;
                 const cudnnStatus_t answer = query_workspace_size(ctx, dir, d, algo, &need);
                 return std::make_pair(answer, need);
               });
  *bytes = size;
  return status;
}

std::vector<ConvCandidate> heuristic_candidates(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d) {
  return memoized(conv_query_memo().ranked, memo_key(ctx, dir, d), ctx, "search_seconds: heuristics",
                  [&] { return query_heuristic_candidates(ctx, dir, d); });
}

cudnnStatus_t run_conv_direction(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d, int algo,
                                 void* x, void* w, void* y, void* workspace, size_t workspace_bytes) {
  const float one = 1.0f, zero = 0.0f;
  switch (dir) {
    case ConvDirection::Forward:
      return cudnnConvolutionForward(ctx.cudnn, &one, d.x, x, d.w, w, d.conv,
                                     static_cast<cudnnConvolutionFwdAlgo_t>(algo), workspace, workspace_bytes, &zero,
                                     d.y, y);
    case ConvDirection::BackwardData:  // reads w and dy (y), writes dx (x)
      return cudnnConvolutionBackwardData(ctx.cudnn, &one, d.w, w, d.y, y, d.conv,
                                          static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), workspace,
                                          workspace_bytes, &zero, d.x, x);
    case ConvDirection::BackwardFilter:  // reads x and dy (y), writes dw (w)
      return cudnnConvolutionBackwardFilter(ctx.cudnn, &one, d.x, x, d.y, y, d.conv,
                                            static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), workspace,
                                            workspace_bytes, &zero, d.w, w);
  }
  return CUDNN_STATUS_BAD_PARAM;
}

std::vector<ConvCandidate> find_candidates(const CudaContext& ctx, ConvDirection dir, const ConvDescriptors& d,
                                           void* x, void* w, void* y, void* workspace, size_t workspace_bytes) {
  switch (dir) {
    case ConvDirection::Forward: {
      auto query = [&](int max_count, int* returned, cudnnConvolutionFwdAlgoPerf_t* perfs) {
        check(cudnnFindConvolutionForwardAlgorithmEx(ctx.cudnn, d.x, x, d.w, w, d.conv, d.y, y, max_count, returned,
                                                     perfs, workspace, workspace_bytes),
              "cudnnFindConvolutionForwardAlgorithmEx");
      };
      return ranked_candidates<cudnnConvolutionFwdAlgoPerf_t>(ctx, dir, query);
    }
    case ConvDirection::BackwardData: {  // reads w and dy (y), writes dx (x)
      auto query = [&](int max_count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perfs) {
        check(cudnnFindConvolutionBackwardDataAlgorithmEx(ctx.cudnn, d.w, w, d.y, y, d.conv, d.x, x, max_count,
                                                          returned, perfs, workspace, workspace_bytes),
              "cudnnFindConvolutionBackwardDataAlgorithmEx");
      };
      return ranked_candidates<cudnnConvolutionBwdDataAlgoPerf_t>(ctx, dir, query);
    }
    case ConvDirection::BackwardFilter: {  // reads x and dy (y), writes dw (w)
      auto query = [&](int max_count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perfs) {
        check(cudnnFindConvolutionBackwardFilterAlgorithmEx(ctx.cudnn, d.x, x, d.y, y, d.conv, d.w, w, max_count,
                                                            returned, perfs, workspace, workspace_bytes),
              "cudnnFindConvolutionBackwardFilterAlgorithmEx");
      };
      return ranked_candidates<cudnnConvolutionBwdFilterAlgoPerf_t>(ctx, dir, query);
    }
  }
  return {};
}

}  // namespace dnnx::cuda
