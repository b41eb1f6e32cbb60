// Note [host fallback]: a node the device backend has no kernel for (an op it lacks, LSTM
// peepholes, integer Max) runs on the host backend inside the same device plan, so that a model
// that runs on the CPU always loads on CUDA (onnxruntime's CPU provider plays the same part).
// The layer queues, in the device's stream order: a copy of each device input into page-locked
// host memory (a constant input is read from its host bytes, uncopied), the host kernel as a host
// call, and a copy of each output back into the arena. All three record into the plan's graph, so
// a replayed graph runs the host layer too; the planner shows it as "on the host: ..." with why.
// The staging memory belongs to the layer: device runs take turns (DeviceRunner::turn), so one
// layer never runs twice at once. The host kernel runs on a thread of the device driver's.
#pragma once
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace dnnx {

// Why `node` runs on the host in a plan of `backend` ("" when it does not): the backend refuses
// it and `host` (may be null) can run it.
std::string host_fallback_reason(const Node& node, const Backend& backend, const Backend* host);
// The same once the backend refused to plan the node for its types or values, with `refusal`
// (its UnsupportedModelError's message, which names the node).
std::string host_fallback_reason(const Node& node, const std::string& refusal, const Backend& backend,
                                 const Backend* host);

// The host layer for one node (above): `host`'s kernel for these types, wrapped to run on
// `backend`'s stream. `reason` goes into the algorithm shown by plan(). Float16 values (an fp16
// model) are converted at the layer's edges: the host kernel computes in float32.
KernelChoice plan_on_host(const Backend& backend, const Backend& host, const Node& node,
                          const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs,
                          const std::string& reason);

}  // namespace dnnx
