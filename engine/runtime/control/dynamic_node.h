// Running the node a staged plan stops at (Note [staged plans] in runtime/stages.h): NonZero and
// Compress through their OpDef's host `evaluate`, If, Loop and Scan here, each body through its
// own Engine (Engine::body), planned per input shape on the model's backend; the sequence and
// optional ops (Note [sequences]) in runtime/values/, and a node that reads a sequence or optional
// here too (Identity passes it on; other ops take tensors).
#pragma once
#include <vector>

#include "ir/graph.h"
#include "runtime/values/host_value.h"

namespace dnnx {

class Engine;

// The node's outputs (tensor values with no tensor where omitted) from its inputs (the same
// where omitted), on the host.
std::vector<HostValue> run_dynamic_node(Engine& owner, const Node& node, const std::vector<HostValue>& inputs);

// The ops with subgraphs (loop.cc, scan.cc). If and Loop carry any value (a sequence through a
// loop, an optional out of a branch); Scan's states and slices are tensors.
std::vector<HostValue> run_if(Engine& owner, const Node& node, const std::vector<HostValue>& inputs);
std::vector<HostValue> run_loop(Engine& owner, const Node& node, const std::vector<HostValue>& inputs);
std::vector<ConstTensorPtr> run_scan(Engine& owner, const Node& node, const std::vector<ConstTensorPtr>& inputs);

}  // namespace dnnx
