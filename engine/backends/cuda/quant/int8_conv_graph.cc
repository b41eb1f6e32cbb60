// cuDNN's int8 convolution for Int8Conv (int8_conv_graph.h has the graph and its layouts).
#include "backends/cuda/quant/int8_conv_graph.h"

#ifdef DNNX_HAVE_CUDNN_FRONTEND

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/runtime/frontend_graph.h"
#include "backends/cuda/search/conv_candidates.h"  // try_plan_alloc
#include "backends/cuda/search/device_timing.h"
#include "backends/cuda/search/pick.h"
#include "backends/cuda/search/search.h"

namespace dnnx::cuda {

namespace fe = cudnn_frontend;

namespace {

// The graph's tensor ids: the variant pack maps them to the run's buffers.
constexpr int64_t kXUid = 1, kWUid = 2, kYUid = 3;

// Channels-last strides of a [n, c, h, w] tensor.
std::vector<int64_t> nhwc_strides(int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }

class CudnnInt8Conv final : public Int8ConvGraph {
 public:
  // plan: the index of a timed plan, or -1 for the one build_frontend_graph built
  CudnnInt8Conv(std::shared_ptr<fe::graph::Graph> graph, int64_t plan, size_t workspace, std::string choice)
      : graph_(std::move(graph)), plan_(plan), workspace_(workspace), choice_(std::move(choice)) {}

  size_t workspace_bytes() const override { return workspace_; }
  std::string choice() const override { return choice_; }

  void run(const CudaContext& ctx, const int8_t* x, const int8_t* w, int32_t* sums, void* workspace) const override {
    // cuDNN takes every pointer as void*; it only reads X and W.
    std::unordered_map<int64_t, void*> pack = {{kXUid, const_cast<int8_t*>(x)}, {kWUid, const_cast<int8_t*>(w)},
                                               {kYUid, sums}};
    // the convolution queues on ctx.stream after the pre-kernel
    if (plan_ < 0) {
      execute_frontend_graph(ctx, *graph_, pack, workspace, "cuDNN int8 convolution");
    } else {
      execute_frontend_plan(ctx, *graph_, pack, workspace, plan_, "cuDNN int8 convolution");
    }
  }

 private:
  std::shared_ptr<fe::graph::Graph> graph_;
  int64_t plan_;
  size_t workspace_;
  std::string choice_;
};

std::shared_ptr<fe::graph::Graph> conv_graph(const Int8ConvShape& s) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(fe::DataType_t::INT8)
      .set_intermediate_data_type(fe::DataType_t::INT32)
      .set_compute_data_type(fe::DataType_t::INT32);
  const int64_t cg = s.c / s.group;  // W's channels
  auto x = graph->tensor(fe::graph::Tensor_attributes()
                             .set_name("X")
                             .set_uid(kXUid)
                             .set_dim({s.n, s.c, s.h, s.w})
                             .set_stride(nhwc_strides(s.c, s.h, s.w)));
  auto w = graph->tensor(fe::graph::Tensor_attributes()
                             .set_name("W")
                             .set_uid(kWUid)
                             .set_dim({s.m, cg, s.kh, s.kw})
                             .set_stride(nhwc_strides(cg, s.kh, s.kw)));
  auto options = fe::graph::Conv_fprop_attributes()
                     .set_name("int8 conv")
                     .set_padding({0, 0})  // X is padded with its zero point already
                     .set_stride({s.stride_h, s.stride_w})
                     .set_dilation({s.dilation_h, s.dilation_w});
  auto sums = graph->conv_fprop(x, w, options);
  // The int32 output through an identity node, as cudnn-frontend's int8 sample writes it.
  auto identity = fe::graph::Pointwise_attributes().set_name("identity").set_mode(fe::PointwiseMode_t::IDENTITY);
  auto y = graph->pointwise(sums, sums, identity);
  y->set_output(true)
      .set_uid(kYUid)
      .set_data_type(fe::DataType_t::INT32)
      .set_dim({s.n, s.m, s.oh, s.ow})
      .set_stride(nhwc_strides(s.m, s.oh, s.ow));
  return graph;
}

}  // namespace

// Note [int8 conv plans]: heuristics A's first plan is not always the fastest for ResNet-50's int8
// convs. On an H100 (cuDNN 9.19, batch 256, bench/probes/probe_cuda_int8_conv.py, 2026-12-06) the
// 3x3 conv of 64 channels at 56x56 took 0.631 ms on plan 0 and 0.204 on the fastest of the 9
// plans that heuristics A and the fallback list give; over 13 of its shapes, 2.55 ms against
// 1.81. But building every plan cost more than 2 s a layer (runtime-compiled engines: a QDQ
// ResNet-50 did not load in 120 s), so only algo_search="exhaustive" times plans, and only the
// first kExhaustivePlans of heuristics A's list, built one by one, each whose workspace fits timed
// on scratch buffers by the one timing policy (Search::time), the take-over rule picking
// (kLtTakeOver, pick.h: near ties stay with the heuristic's order). Every other policy takes plan
// 0 as built by heuristics A (build_frontend_graph), and the choice is not written to the plan
// cache yet.
constexpr int64_t kExhaustivePlans = 4;

namespace {

// The exhaustive choice among the first kExhaustivePlans plans (Note [int8 conv plans]).
std::unique_ptr<Int8ConvGraph> timed_int8_conv(const CudaContext& ctx, const Int8ConvShape& s,
                                               std::shared_ptr<fe::graph::Graph> graph, std::string& why) {
  int64_t plans = 0;
  why = build_frontend_graph_plans(ctx, *graph, kExhaustivePlans, plans);
  if (!why.empty()) return nullptr;
  const size_t count = static_cast<size_t>(std::min(plans, kExhaustivePlans));
  std::vector<size_t> workspace(count, SIZE_MAX);
  size_t most = 0;
  for (size_t i = 0; i < count; ++i) {
    int64_t bytes = 0;
    if (!graph->get_workspace_size_plan_at_index(static_cast<int64_t>(i), bytes).is_good()) continue;  // not built
    workspace[i] = static_cast<size_t>(bytes);
    if (workspace[i] <= ctx.options.workspace_limit) most = std::max(most, workspace[i]);
  }
  auto fits = [&](size_t i) { return workspace[i] <= ctx.options.workspace_limit; };
  if (!fits(0)) {
    why = "cuDNN's first plan needs " + mib_text(workspace[0]) + " of workspace, over the limit of " +
          mib_text(ctx.options.workspace_limit);
    return nullptr;
  }
  auto name_of = [&](size_t i) {
    std::string name;
    return graph->get_plan_name_at_index(static_cast<int64_t>(i), name).is_good() && !name.empty() ? name
                                                                                                  : "plan " + std::to_string(i);
  };
  size_t chosen = 0;
  std::string choice = "cuDNN's first plan " + name_of(0);
  DeviceMemory x, w, y, scratch;
  const size_t x_bytes = static_cast<size_t>(s.n * s.h * s.w * s.c),
               w_bytes = static_cast<size_t>(s.m * (s.c / s.group) * s.kh * s.kw),
               y_bytes = static_cast<size_t>(s.n * s.oh * s.ow * s.m) * sizeof(int32_t);
  const Search search(ctx);  // timed: algo_search="exhaustive"
  if (count > 1 && try_plan_alloc(ctx, x_bytes, x) && try_plan_alloc(ctx, w_bytes, w) && try_plan_alloc(ctx, y_bytes, y) &&
      try_plan_alloc(ctx, most, scratch)) {
    fill_search_pattern(ctx, x.get(), x_bytes);
    fill_search_pattern(ctx, w.get(), w_bytes);
    std::unordered_map<int64_t, void*> pack = {{kXUid, x.get()}, {kWUid, w.get()}, {kYUid, y.get()}};
    auto run = [&](size_t i) {
      const bool ok = graph->execute_plan_at_index(ctx.cudnn, pack, scratch.get(), static_cast<int64_t>(i)).is_good();
      if (!ok) cudaGetLastError();  // a plan that would not run: not sticky
      return ok;
    };
    const std::vector<double> times = search.time(count, fits, run, "cuDNN int8 conv (search)").ms;
    search.count_timing_run();
    const int best = pick_fastest(times, kLtTakeOver);
    if (best >= 0) {
      chosen = static_cast<size_t>(best);
      char text[160];
      std::snprintf(text, sizeof(text), "timed: %s %.3f ms, the fastest of cuDNN's first %zu plans", name_of(chosen).c_str(),
                    times[chosen], count);
      choice = text;
    }
  }
  return std::make_unique<CudnnInt8Conv>(std::move(graph), static_cast<int64_t>(chosen), workspace[chosen],
                                         std::move(choice));
}

}  // namespace

std::unique_ptr<Int8ConvGraph> make_int8_conv_graph(const CudaContext& ctx, const Int8ConvShape& s, std::string& why) {
  std::shared_ptr<fe::graph::Graph> graph = conv_graph(s);
  if (ctx.options.algo_search == AlgoSearch::Exhaustive) return timed_int8_conv(ctx, s, std::move(graph), why);
  // check_support is the step that knows this cuDNN's and this GPU's int8 limits (channel
  // multiples, groups)
  size_t workspace = 0;
  why = build_frontend_graph(ctx, *graph, workspace);
  if (!why.empty()) return nullptr;
  return std::make_unique<CudnnInt8Conv>(std::move(graph), -1, workspace, "cuDNN's heuristic plan");
}

}  // namespace dnnx::cuda

#else  // built without cudnn-frontend's headers: no int8 convolution (the layer runs on the host)

namespace dnnx::cuda {

std::unique_ptr<Int8ConvGraph> make_int8_conv_graph(const CudaContext&, const Int8ConvShape&, std::string& why) {
  why = "this build has no cudnn-frontend";
  return nullptr;
}

}  // namespace dnnx::cuda

#endif
