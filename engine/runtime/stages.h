// Note [staged plans]: some nodes have output shapes that follow from values computed at run time
// (OpDef::value_shaped: NonZero and Compress count values; If picks a branch, Loop runs a
// value-dependent number of iterations, Scan runs its body per slice). A plan cannot hold what
// comes after such a node, so the planner stops there:
//
//   stage 0: an ordinary Plan of nodes [0, cut) whose outputs are the values still needed
//            after it (`Plan::carried`: read by the node at `cut` or later, or graph outputs);
//   node `cut`: the engine runs it itself, on the host (OpDef::evaluate, or runtime/control/ for
//            the ops with subgraphs, whose bodies are planned and run like graphs, on the model's
//            backend), or on a device backend's staged kernel where it has one (NonZero and
//            NonMaxSuppression on CUDA: Note [device staged kernels] in runtime/staged_kernel.h);
//   the rest: the continuation graph of nodes (cut, end], whose inputs are the graph inputs and
//            values it reads from before (the cut node's outputs among them), is a graph of its
//            own with an Engine of its own (built on first use), planned per shape through the
//            same plan cache (its key: those inputs' shapes and types, and the values of its
//            value inputs), and staged again at its own first value-shaped node.
//
// A value-shaped node whose inputs are all constants of the plan (a NonZero of a value input or
// of folded shapes) folds instead (`OpDef::evaluate` at plan time), and the plan goes on; so does
// an If whose cond is a constant of the plan, its branch planned in place (Note [inlined
// branches] in planner.cc).
//
// Each stage and each body is an Engine that shares the model's backend and keeps its plans in
// its own cache, bounded by the model's max_plans; Model.planner_stats()["stages"] counts them per
// stage and body. plan() ends a staged plan with a row that says where and why. On a device,
// each stage is a plan of its own, so a CUDA graph never spans a value-shaped node: the
// executor captures and replays each stage's plan separately. The values a stage hands on stay
// on the device (Note [device-resident stages] in runtime/stage_value.h); what the host decides
// with (the node's inputs) is read back to it.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

// The values produced by nodes before `cut` that node `cut`, a later node or a graph output reads
// (first-read order): what a plan staged at `cut` hands on.
std::vector<std::string> carried_names(const Graph& graph, size_t cut);

// The graph of nodes (cut, end]: its inputs are the graph inputs and values produced at or
// before `cut` that it reads (typed by the plan key that its parent builds), its constants the
// graph's that it reads, its outputs the graph's.
Graph continuation_graph(const Graph& graph, size_t cut);

// Note [stage slots]: the values a staged run holds after its plan ran, in slots: the graph's
// inputs, then the plan's carried values, then the staged node's outputs. Where each value that
// the node, the graph's outputs (the node was the last) or the continuation reads lies is worked
// out once per plan, from the names; a run then hands values on by index. A map from names to
// values, built at each stage, cost a heap allocation per input, and a continuation takes every
// value any later stage reads (up to ~270 in torchvision's SSDlite, ~180 stages a run): a
// quarter of SSDlite's host time on CUDA went to malloc and free there.
struct StageSlots {
  int size = 0;
  std::vector<int> node_inputs;   // per input of the node: its slot; -1: a constant or omitted ("")
  std::vector<int> node_outputs;  // per output of the node: its slot; -1: unnamed
  std::vector<int> results;       // the node was the last: per graph output its slot; -1: a constant
  std::vector<int> rest_inputs;   // else per input of the continuation its slot; -1: none holds it
};
// `rest`: the continuation's graph, null when node `cut` is the graph's last.
StageSlots stage_slots(const Graph& graph, const std::vector<std::string>& carried, size_t cut, const Graph* rest);

// "NonZero 'n1' has a value-dependent output shape", ...: why a plan is staged at `node`.
std::string stage_reason(const Node& node);

}  // namespace dnnx
