// The steps every cudnn-frontend graph of the backend takes (cuDNN's graph API: the fused
// attention, attention/fused_attention.cc, and the int8 convolution, quant/int8_conv_graph.cc):
// built once at plan time, queued on the model's stream at run time. Header-only, and included
// only by the files CMake compiles with cudnn-frontend's headers (DNNX_HAVE_CUDNN_FRONTEND): those
// headers are heavy, so no other translation unit pays for them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include <cudnn_frontend.h>

#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/search/reasons.h"

namespace dnnx::cuda {

// "" when `status` is good, else "STEP refused the graph: cuDNN's message".
inline std::string frontend_refusal(cudnn_frontend::error_t status, const char* step) {  // by value: get_message is not const
  if (status.is_good()) return "";
  std::string message = status.get_message();
  return std::string(step) + " refused the graph: " + (message.empty() ? "no reason given" : message);
}

// Validates `graph`, lowers it for ctx's handle, asks heuristics A for its engines, checks
// support and builds the plan. "" when built (`workspace`: the bytes its plan needs, within ctx's
// workspace limit); else why not: the first step to refuse and cuDNN's message (check_support is
// the step that knows this cuDNN's and this GPU's limits), or the workspace over the limit.
// The steps both builders below share: validate, lower for ctx's handle, ask heuristics A for
// its engines, check support; "" or the first step's refusal.
inline std::string checked_frontend_graph(const CudaContext& ctx, cudnn_frontend::graph::Graph& graph) {
  std::string why = frontend_refusal(graph.validate(), "validate");
  if (why.empty()) why = frontend_refusal(graph.build_operation_graph(ctx.cudnn), "build_operation_graph");
  if (why.empty()) why = frontend_refusal(graph.create_execution_plans({cudnn_frontend::HeurMode_t::A}),
                                          "create_execution_plans");
  if (why.empty()) why = frontend_refusal(graph.check_support(), "check_support");
  return why;
}

inline std::string build_frontend_graph(const CudaContext& ctx, cudnn_frontend::graph::Graph& graph,
                                        size_t& workspace) {
  std::string why = checked_frontend_graph(ctx, graph);
  if (why.empty()) why = frontend_refusal(graph.build_plans(), "build_plans");
  int64_t bytes = 0;
  if (why.empty()) why = frontend_refusal(graph.get_workspace_size(bytes), "get_workspace_size");
  if (!why.empty()) return "cuDNN " + std::to_string(cudnnGetVersion()) + ": " + why;
  workspace = static_cast<size_t>(bytes);
  if (workspace > ctx.options.workspace_limit) {
    return "needs " + mib_text(workspace) + " of workspace, over the limit of " + mib_text(ctx.options.workspace_limit);
  }
  return "";
}

// As build_frontend_graph, but for a caller that times plans (quant/int8_conv_graph.cc): heuristics
// A's list is checked and its first `most` plans are built one by one (building every plan, the
// fallback list's too, took over 2 s a layer on an H100: runtime-compiled engines). "" and `plans`
// (how many are listed; those past `most`, or that failed to build, fail to run) when at least
// plan 0 built, else why not. A plan's workspace: get_workspace_size_plan_at_index.
inline std::string build_frontend_graph_plans(const CudaContext& ctx, cudnn_frontend::graph::Graph& graph, int64_t most,
                                              int64_t& plans) {
  const std::string why = checked_frontend_graph(ctx, graph);
  if (!why.empty()) return "cuDNN " + std::to_string(cudnnGetVersion()) + ": " + why;
  plans = graph.get_execution_plan_count();
  bool built = false;
  for (int64_t i = 0; i < plans && i < most; ++i) {
    const bool ok = graph.build_plan_at_index(i).is_good();
    if (i == 0 && !ok) return "cuDNN " + std::to_string(cudnnGetVersion()) + ": build_plan_at_index refused plan 0";
    built = built || ok;
  }
  return built ? "" : "cuDNN " + std::to_string(cudnnGetVersion()) + ": no plan was built";
}

// A DeviceError naming `what` unless `status` is good; where an earlier kernel left a sticky
// error, that error (DeviceLostError) is what is said.
inline void throw_unless_executed(cudnn_frontend::error_t status, const char* what) {  // by value: get_message is not const
  if (status.is_good()) return;
  const cudaError_t last = cudaPeekAtLastError();
  if (is_sticky(last)) check(last, what);
  throw DeviceError(std::string(what) + ": cudnn_frontend Graph::execute failed: " + status.get_message());
}

// Queues the built `graph` on ctx.cudnn (bound to ctx.stream: after the layers before it) with
// `pack` mapping its tensor uids to the run's buffers. A failure is a DeviceError naming `what`;
// where an earlier kernel left a sticky error, that error (DeviceLostError) is what is said.
inline void execute_frontend_graph(const CudaContext& ctx, cudnn_frontend::graph::Graph& graph,
                                   std::unordered_map<int64_t, void*>& pack, void* workspace, const char* what) {
  throw_unless_executed(graph.execute(ctx.cudnn, pack, workspace), what);
}

// As execute_frontend_graph, with the plan at `index` of build_frontend_graph_plans.
inline void execute_frontend_plan(const CudaContext& ctx, cudnn_frontend::graph::Graph& graph,
                                  std::unordered_map<int64_t, void*>& pack, void* workspace, int64_t index,
                                  const char* what) {
  throw_unless_executed(graph.execute_plan_at_index(ctx.cudnn, pack, workspace, index), what);
}

}  // namespace dnnx::cuda
