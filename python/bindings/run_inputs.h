// The inputs of Model.run as the engine reads them. Each may be
//   - a host array: numpy, or anything numpy turns into one (C order is made where needed);
//   - a dnnx.DeviceArray on the model's device;
//   - a DLPack producer on a CUDA device (torch, CuPy, JAX): asked for a capsule with
//     __dlpack__(stream=the model's import stream), so that the producer orders its pending
//     writes before our reads (Backend::import_stream);
//   - an object with __cuda_array_interface__ (v2 or v3; a v3 "stream" is waited for).
// Device memory is read in place (copied device to device into the arena); it must be
// C-contiguous and on the model's device. A wrong dtype, shape, layout or device is an
// InputError (ValueError) naming the input.
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "runtime/engine.h"

namespace dnnx {

struct InputArg {
  TensorInfo info;
  const void* data = nullptr;
  Memory memory = Memory::Host;
  py::object keep;  // holds the memory during the run: an array, a capsule, a DeviceArray
};

struct RunInputs {
  std::vector<InputArg> args;
  std::vector<uintptr_t> streams;  // external streams the run must wait for first
  // Note [string tensors] (ir/tensor.h): the strings of string inputs, and those the run makes
  // (RunIO::strings); null until a string input or a plan with string values needs one.
  std::shared_ptr<StringStore> strings;
  std::deque<std::vector<StringPtr>> string_elements;  // each string input's elements (InputArg::data)

  // The run's string store, made on first use.
  StringStore& string_store();

  // The engine's view of these inputs (no outputs yet).
  RunIO io() const;
  std::vector<TensorInfo> infos() const;
};

// Reads `objects` (graph-input order) for `engine`. Shapes and the input count are checked by
// the engine afterwards (Engine::check_inputs); dtype, layout and device here.
RunInputs read_inputs(const py::list& objects, const Engine& engine);
// The same for a backend and the graph inputs it runs (the fine-tuner's, bind_train.cc).
RunInputs read_inputs(const py::list& objects, const Backend& backend, const std::vector<GraphInput>& declared);

}  // namespace dnnx
