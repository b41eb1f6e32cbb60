// Declarations shared by the bind_*.cc files of the _core module (and, for graph_from_ir, by the
// test-only _pass_hooks module in pass_hooks/).
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "runtime/device_options.h"
#include "ir/graph.h"

namespace dnnx {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_engine(py::module_& m);
void bind_device(py::module_& m);
void bind_train(py::module_& m);  // bind_train.cc: fine-tuning (after bind_errors)
void bind_threads(py::module_& m);  // bind_threads.cc: the CPU thread pool's size

// numpy dtype <-> DType; anything else is an InputError naming `what`.
DType dtype_from_numpy(const py::dtype& dt, const std::string& what);
py::dtype numpy_dtype(DType t);
// Note [string tensors] (ir/tensor.h): whether a numpy dtype holds strings (object, str, bytes);
// an array's elements as strings in `store` (C order; an InputError naming `what` for an element
// that is not str or bytes); and string elements back as a numpy object array of str.
bool is_string_dtype(const py::dtype& dt);
std::vector<StringPtr> strings_from_array(const py::array& array, StringStore& store, const std::string& what);
py::array strings_to_array(const StringPtr* elements, const Shape& shape);

// One dict per layer of a plan: name, op, inputs, outputs, algorithm, math, workspace,
// time_ms, rejected (python/dnnx/plan.py prints them).
struct Plan;
py::list plan_rows(const Plan& plan);

// One dict per recorded plan (Model.graphs(), Tuner.graphs()): input_shapes, state, captures,
// replays, and the eager count under `eager_key` ("eager_runs" for a model, "eager_steps" for a tuner).
struct GraphStatus;
py::list graph_rows(const std::vector<GraphStatus>& graphs, const char* eager_key);

// The IR dict from python/dnnx/_importer.py -> Graph.
Graph graph_from_ir(const py::dict& ir);

// The options dict python/dnnx/_device.py builds -> DeviceOptions (absent keys keep defaults).
DeviceOptions device_options_from_dict(const py::dict& options);

}  // namespace dnnx
