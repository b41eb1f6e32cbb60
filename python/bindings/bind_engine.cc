// _core.Engine: load a Graph on a backend, run numpy arrays through it, show its plan.
#include <pybind11/stl.h>

#include "backends/cpu/cpu_backend.h"
#include "bindings.h"
#include "core/device_library.h"
#include "core/engine.h"
#include "core/passes/passes.h"

namespace dnnx {

namespace {

// device: "cpu", or "cuda" with options["library"] (the path of libdnnx_cuda.so) and the
// device options (bind_device.cc).
std::unique_ptr<Backend> make_backend(const std::string& device, const py::dict& options) {
  if (device == "cpu") return std::make_unique<CpuBackend>();
  if (device == "cuda") {
    if (!options.contains("library")) throw DeviceError("device 'cuda': no backend library was given");
    return create_device_backend(options["library"].cast<std::string>(), device_options_from_dict(options));
  }
  throw DeviceError("device '" + device + "' is not supported ('cpu' or 'cuda')");
}

py::list shapes_list(const std::vector<const TensorInfo*>& infos) {
  py::list out;
  for (const TensorInfo* t : infos) out.append(t ? py::cast(t->shape) : py::none());
  return out;
}

py::list plan_rows(const Plan& plan) {
  py::list rows;
  for (const PlannedLayer& layer : plan.layers) {
    std::vector<const TensorInfo*> ins, outs;
    for (int id : layer.inputs) ins.push_back(id < 0 ? nullptr : &plan.values[id].info);
    for (int id : layer.outputs) outs.push_back(id < 0 ? nullptr : &plan.values[id].info);
    py::list rejected;
    for (const Rejected& r : layer.rejected) rejected.append(py::make_tuple(r.algorithm, r.reason));
    py::dict row;
    row["name"] = layer.node->name;
    row["op"] = layer.node->op_type;
    row["inputs"] = shapes_list(ins);
    row["outputs"] = shapes_list(outs);
    row["algorithm"] = layer.algorithm;
    row["math"] = layer.math;
    row["time_ms"] = layer.time_ms < 0 ? py::object(py::none()) : py::object(py::float_(layer.time_ms));
    row["workspace"] = layer.workspace_bytes;
    row["rejected"] = rejected;
    rows.append(row);
  }
  return rows;
}

// {pass name: on} -> PassOptions; unnamed passes stay on. An unknown name is a ValueError.
PassOptions pass_options(const py::dict& switches) {
  PassOptions options;
  for (auto item : switches) set_pass(options, item.first.cast<std::string>(), item.second.cast<bool>());
  return options;
}

class PyEngine {
 public:
  PyEngine(const py::dict& ir, const std::string& device, const py::dict& options, const py::dict& passes)
      : engine_(graph_from_ir(ir), make_backend(device, options), pass_options(passes)) {}

  py::list run(const py::list& arrays) {
    std::vector<py::array> inputs;
    std::vector<TensorInfo> infos;
    const auto& declared = engine_.graph().inputs;
    for (size_t i = 0; i < arrays.size(); ++i) {
      const std::string what = i < declared.size() ? "input '" + declared[i].name + "'" : "input " + std::to_string(i);
      py::array a = py::array::ensure(arrays[i], py::array::c_style);
      if (!a) throw InputError(what + ": expected a numpy array");
      TensorInfo info;
      if (i < declared.size() && !a.dtype().is(numpy_dtype(declared[i].dtype))) {
        throw InputError(what + ": expected dtype " + dtype_name(declared[i].dtype) + ", got " +
                         std::string(py::str(a.dtype())));
      }
      info.dtype = dtype_from_numpy(a.dtype(), what);
      for (py::ssize_t d = 0; d < a.ndim(); ++d) info.shape.push_back(a.shape(d));
      infos.push_back(info);
      inputs.push_back(std::move(a));
    }
    engine_.check_inputs(infos);
    std::vector<Shape> shapes;
    for (const TensorInfo& t : infos) shapes.push_back(t.shape);
    std::shared_ptr<const Plan> plan;
    {
      py::gil_scoped_release release;
      plan = engine_.plan_for(shapes);
    }
    std::vector<const void*> in_ptrs;
    for (const py::array& a : inputs) in_ptrs.push_back(a.data());
    py::list outputs;
    std::vector<void*> out_ptrs;
    for (int id : plan->outputs) {
      const TensorInfo& info = plan->values[id].info;
      py::array out(numpy_dtype(info.dtype), info.shape);
      out_ptrs.push_back(out.mutable_data());
      outputs.append(out);
    }
    {
      py::gil_scoped_release release;
      engine_.run(*plan, in_ptrs.data(), out_ptrs.data());
    }
    return outputs;
  }

  std::shared_ptr<const Plan> plan_or_default(const py::object& shapes) {
    if (shapes.is_none()) return engine_.plan_for(engine_.default_shapes());
    return engine_.plan_for(shapes.cast<std::vector<Shape>>());
  }

  py::list plan(const py::object& shapes) { return plan_rows(*plan_or_default(shapes)); }

  py::dict memory(const py::object& shapes) {
    auto plan = plan_or_default(shapes);
    py::dict d;
    d["arena_bytes"] = plan->arena_bytes;
    d["naive_bytes"] = plan->naive_bytes;
    d["workspace_bytes"] = plan->workspace_bytes;
    return d;
  }

  std::vector<Shape> default_shapes() const { return engine_.default_shapes(); }

  // {counter: value, ..., "plan_cache": path or None, "warnings": [...]}; warnings once each.
  py::dict planner_report() const {
    const PlannerReport report = engine_.backend().planner_report();
    py::dict d;
    for (const auto& kv : report.counters) d[py::str(kv.first)] = kv.second;
    d["plan_cache"] = report.cache_path.empty() ? py::object(py::none()) : py::object(py::str(report.cache_path));
    d["warnings"] = py::cast(report.warnings);
    return d;
  }

 private:
  Engine engine_;
};

}  // namespace

void bind_engine(py::module_& m) {
  py::class_<PyEngine>(m, "Engine")
      .def(py::init<const py::dict&, const std::string&, const py::dict&, const py::dict&>(), py::arg("ir"),
           py::arg("device") = "cpu", py::arg("options") = py::dict(), py::arg("passes") = py::dict())
      .def("run", &PyEngine::run, py::arg("inputs"),
           "Runs the graph on numpy arrays (graph-input order); returns the outputs in graph order.")
      .def("plan", &PyEngine::plan, py::arg("shapes") = py::none(),
           "One dict per layer: name, op, inputs, outputs, algorithm, math, workspace, time_ms "
           "(measured, or None), rejected.")
      .def("memory", &PyEngine::memory, py::arg("shapes") = py::none())
      .def("default_shapes", &PyEngine::default_shapes)
      .def("planner_report", &PyEngine::planner_report,
           "The planner's counters (timing_runs, cache_hits, ...), the plan cache file and the "
           "warnings not reported before.");
  m.def("pass_names", &pass_names, "The rewrite passes, in the order they run.");
}

}  // namespace dnnx
