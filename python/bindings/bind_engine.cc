// _core.Engine: load a Graph on a backend, run host or device arrays through it, show its plan,
// profile its layers.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "backends/cpu/cpu_backend.h"
#include "bindings.h"
#include "bind_values.h"
#include "runtime/run_fallback.h"
#include "device_array.h"
#include "run_inputs.h"
#include "runtime/device_library.h"
#include "runtime/device_start.h"
#include "runtime/engine.h"
#include "runtime/kernel_registry.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/rewrite.h"

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

// {op type: {"dtypes": [...], "gradient": bool, "checks_nodes": bool, "staged": bool}} of one backend's
// registrations (runtime/kernel_registry.h).
py::dict kernel_dict(const KernelRegistry& registry) {
  py::dict out;
  for (const auto& [op, entry] : registry.entries()) {
    py::list dtypes;
    for (DType t : entry.dtypes) dtypes.append(dtype_name(t));
    py::dict caps;
    caps["dtypes"] = dtypes;
    caps["gradient"] = static_cast<bool>(entry.gradient);
    caps["checks_nodes"] = static_cast<bool>(entry.check);
    caps["staged"] = static_cast<bool>(entry.staged);  // Note [device staged kernels]
    out[py::str(op)] = caps;
  }
  return out;
}

py::list shapes_list(const std::vector<const TensorInfo*>& infos) {
  py::list out;
  for (const TensorInfo* t : infos) out.append(t ? py::cast(t->shape) : py::none());
  return out;
}


// {pass name: on} -> PassOptions; unnamed passes stay on. An unknown name is a ValueError.
PassOptions pass_options(const py::dict& switches) {
  PassOptions options;
  for (auto item : switches) set_pass(options, item.first.cast<std::string>(), item.second.cast<bool>());
  return options;
}

// precision="fp16": options["fp16_calibration"], {value name: (mean, mean square, max |value|)}
// measured by a calibration batch (python/dnnx/_calibration.py), joins the pass options.
// Note [measured precision]: options["precision_kept"], {node name: why it stays fp32}, chosen by
// timing at load (python/dnnx/_precision_choice.py), joins them too.
PassOptions with_calibration(PassOptions passes, const py::dict& options) {
  if (options.contains("precision_kept")) {
    for (auto item : options["precision_kept"].cast<py::dict>()) {
      passes.keep_fp32[item.first.cast<std::string>()] = item.second.cast<std::string>();
    }
  }
  if (!options.contains("fp16_calibration")) return passes;
  for (auto item : options["fp16_calibration"].cast<py::dict>()) {
    const auto stats = item.second.cast<std::tuple<double, double, double>>();
    passes.half_calibration[item.first.cast<std::string>()] =
        MeasuredValue{std::get<0>(stats), std::get<1>(stats), std::get<2>(stats)};
  }
  return passes;
}

size_t positive_count(const py::object& value, const char* what) {
  if (py::isinstance<py::bool_>(value) || !py::isinstance<py::int_>(value) || value.cast<long long>() < 1) {
    throw InputError(std::string(what) + " must be a positive int, got " + std::string(py::repr(value)));
  }
  return value.cast<size_t>();
}

EngineOptions engine_options(const py::dict& options) {
  EngineOptions o;
  if (options.contains("cuda_graph")) o.device_graphs = options["cuda_graph"].cast<bool>();
  if (options.contains("max_plans")) o.max_plans = positive_count(options["max_plans"], "max_plans");
  return o;
}

// Where Model.run puts its outputs.
enum class OutputKind { Numpy, Device };

OutputKind output_kind(const std::string& name) {
  if (name == "numpy") return OutputKind::Numpy;
  if (name == "device") return OutputKind::Device;
  throw InputError("output must be 'numpy' or 'device', got '" + name + "'");
}

class PyEngine {
 public:
  py::dict kernels() const { return kernel_dict(engine_->backend().kernels()); }

  // Note [background search]: a candidate engine that now serves requests takes the device's
  // highest stream priority.
  void set_foreground() const {
    if (const DeviceServices* device = engine_->backend().device()) device->set_priority(true);
  }

  // Times its three steps for Model.load_profile(): the IR converted (the weights copied in),
  // the backend opened, the Engine built (validation, passes, constants upload, the first plan).
  // started: a DeviceStart whose backend this engine takes (Note [overlapped device start]), or None.
  PyEngine(const py::dict& ir, const std::string& device, const py::dict& options, const py::dict& passes,
           const py::object& started) {
    using Clock = std::chrono::steady_clock;
    const auto seconds = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    const auto start = Clock::now();
    Graph graph = graph_from_ir(ir);
    const auto converted = Clock::now();
    std::unique_ptr<Backend> backend;
    if (started.is_none()) {
      backend = make_backend(device, options);
    } else {
      DeviceStart& start = started.cast<DeviceStart&>();
      py::gil_scoped_release release;  // joins the start's thread where it is still opening
      backend = start.take();
    }
    const auto opened = Clock::now();
    // Note [sequences]: the graph inputs' value kinds ("tensor", "sequence", "optional"), where
    // any is not a tensor; their element types are the inputs' dtypes.
    if (ir.contains("input_kinds") && !ir["input_kinds"].is_none()) {
      for (const py::handle k : ir["input_kinds"]) input_kinds_.push_back(value_kind_from_name(k.cast<std::string>()));
    }
    for (const GraphInput& in : graph.inputs) input_elems_.push_back(in.dtype);
    EngineOptions engine_switches = engine_options(options);
    engine_switches.input_kinds = input_kinds_;
    const PassOptions pass_switches = with_calibration(pass_options(passes), options);
    {
      // Building plans the declared shapes, which may time algorithms for seconds: other Python
      // threads (a searcher's model serving requests) go on meanwhile.
      py::gil_scoped_release release;
      engine_ = std::make_shared<Engine>(std::move(graph), std::move(backend), pass_switches, engine_switches);
    }
    load_phases_ = {{"engine: graph", seconds(start, converted)},
                    {"engine: backend", seconds(converted, opened)},
                    {"engine: build", seconds(opened, Clock::now())}};
  }

  py::dict load_phases() const {
    py::dict out;
    for (const auto& [phase, s] : load_phases_) out[py::str(phase)] = s;
    return out;
  }

  // arrays: host or device arrays (run_inputs.h); output: "numpy" or "device" (DeviceArrays).
  py::list run(const py::list& arrays, const std::string& output) {
    const OutputKind kind = output_kind(output);
    if (!input_kinds_.empty()) return run_values(arrays, kind);
    RunInputs inputs = read_inputs(arrays, *engine_);
    std::shared_ptr<const Plan> plan = plan_checked(inputs);
    if (plan->has_strings) inputs.string_store();  // where the run's string kernels put theirs
    RunIO io = inputs.io();
    py::list outputs;
    if (plan->stage_node >= 0) return run_staged(*plan, inputs, kind);
    if (kind == OutputKind::Device) {
      std::vector<std::shared_ptr<DeviceArray>> arrays;
      io.output_memory = Memory::Device;
      {
        py::gil_scoped_release release;  // allocating and running wait for the device turn
        for (int id : plan->outputs) {
          arrays.push_back(std::make_shared<DeviceArray>(engine_, plan->values[id].info));
          io.outputs.push_back(arrays.back()->data());
        }
        engine_->run(*plan, io);
      }
      for (const auto& array : arrays) outputs.append(py::cast(array));
      return outputs;
    }
    // Note [string tensors]: a string output is written as the engine's elements, then made a
    // numpy array of str while the run's store still holds them.
    std::map<size_t, std::vector<StringPtr>> string_outputs;
    for (size_t o = 0; o < plan->outputs.size(); ++o) {
      const TensorInfo& info = plan->values[plan->outputs[o]].info;
      if (info.dtype == DType::String) {
        std::vector<StringPtr>& elements = string_outputs[o];
        elements.resize(static_cast<size_t>(std::max<int64_t>(numel(info.shape), 0)));
        io.outputs.push_back(elements.data());
        outputs.append(py::none());
        continue;
      }
      py::array out(numpy_dtype(info.dtype), info.shape);
      io.outputs.push_back(out.mutable_data());
      outputs.append(out);
    }
    {
      py::gil_scoped_release release;
      engine_->run(*plan, io);
    }
    for (const auto& [o, elements] : string_outputs) {
      outputs[o] = strings_to_array(elements.data(), plan->values[plan->outputs[o]].info.shape);
    }
    return outputs;
  }

  // Note [staged plans] (runtime/stages.h): the inputs as host tensors (device ones copied back),
  // the stages run by the engine, the outputs (whose shapes only the run decides) converted.
  py::list run_staged(const Plan& plan, const RunInputs& inputs, OutputKind kind) {
    const RunIO io = inputs.io();
    std::vector<HostValue> outs;
    {
      py::gil_scoped_release release;
      std::vector<HostValue> values;
      for (size_t i = 0; i < inputs.args.size(); ++i) {
        auto t = std::make_shared<ConstTensor>();
        t->info = inputs.args[i].info;
        t->data.resize(t->info.bytes());
        if (t->info.dtype == DType::String) t->strings = inputs.strings;  // Note [string tensors]
        if (t->data.empty()) {
          // nothing to copy
        } else if (io.input_memory[i] == Memory::Device) {
          engine_->device()->array_to_host(t->data.data(), io.inputs[i], t->data.size(), io.input_streams);
        } else {
          std::memcpy(t->data.data(), io.inputs[i], t->data.size());
        }
        values.emplace_back(std::move(t));
      }
      outs = engine_->run_values(plan, values);
    }
    return outputs_to_py(outs, kind);
  }

  // Note [sequences]: a graph with sequence or optional inputs: Python lists and None (or values)
  // as host values, planned by their kinds and shapes, run through the staged machinery.
  py::list run_values(const py::list& objects, OutputKind kind) {
    const Graph& g = engine_->graph();
    if (objects.size() != g.inputs.size()) {
      throw InputError("expected " + std::to_string(g.inputs.size()) + " input(s), got " + std::to_string(objects.size()));
    }
    std::vector<HostValue> values;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      values.push_back(value_from_py(objects[i], input_kinds_.at(i), input_elems_.at(i), g.inputs[i].name));
      if (values.back().is_tensor()) check_tensor_input(g.inputs[i], values.back().tensor->info);
    }
    std::vector<HostValue> outs;
    {
      py::gil_scoped_release release;
      outs = engine_->run_values(values);
    }
    return outputs_to_py(outs, kind);
  }

  // A tensor input of a graph with sequence inputs: its rank and fixed dims as check_inputs checks them.
  static void check_tensor_input(const GraphInput& in, const TensorInfo& got) {
    bool ok = got.shape.size() == in.dims.size();
    for (size_t d = 0; ok && d < in.dims.size(); ++d) ok = in.dims[d] < 0 || got.shape[d] == in.dims[d];
    if (!ok) throw InputError("input '" + in.name + "': expected " + in.dims_str() + " " + dtype_name(in.dtype) + ", got " + got.str());
  }

  // Host values as Python objects (value_to_py), or DeviceArrays for output='device' (tensors only).
  py::list outputs_to_py(const std::vector<HostValue>& outs, OutputKind kind) {
    py::list outputs;
    const Graph& g = engine_->graph();
    for (size_t o = 0; o < outs.size(); ++o) {
      if (kind != OutputKind::Device) {
        outputs.append(value_to_py(outs[o]));
        continue;
      }
      if (!outs[o].is_tensor() || !outs[o].tensor) {
        throw InputError("output '" + (o < g.outputs.size() ? g.outputs[o] : std::string("?")) + "' is " + outs[o].str() +
                         ": output='device' returns tensors only; use output='numpy'");
      }
      const ConstTensorPtr& t = outs[o].tensor;
      auto array = std::make_shared<DeviceArray>(engine_, t->info);
      if (!t->data.empty()) {
        py::gil_scoped_release release;
        engine_->device()->array_from_host(array->data(), t->data.data(), t->data.size());
      }
      outputs.append(py::cast(array));
    }
    return outputs;
  }

  // {"layers": [{name, op, algorithm, times_ms: [per repeat]}], "graph": measured on a graph}.
  py::dict profile(const py::list& arrays, int repeat) {
    if (repeat < 1) throw InputError("repeat must be at least 1, got " + std::to_string(repeat));
    const RunInputs inputs = read_inputs(arrays, *engine_);
    std::shared_ptr<const Plan> plan = plan_checked(inputs);
    LayerTimes times;
    {
      py::gil_scoped_release release;
      times = engine_->profile(*plan, inputs.io(), repeat);
    }
    py::list layers;
    for (size_t i = 0; i < plan->layers.size(); ++i) {
      const PlannedLayer& layer = plan->layers[i];
      py::dict row;
      row["name"] = layer.node->name;
      row["op"] = layer.node->op_key();
      row["algorithm"] = layer.algorithm;
      row["times_ms"] = times.ms[i];
      // The values it reads and writes, and whether any is half (_precision_choice.py's segments).
      py::list ins, outs;
      bool half = false;
      for (const std::string& v : layer.node->inputs) ins.append(v);
      for (const std::string& v : layer.node->outputs) outs.append(v);
      for (int v : layer.inputs) half = half || (v >= 0 && is_half(plan->values[v].info.dtype));
      for (int v : layer.outputs) half = half || (v >= 0 && is_half(plan->values[v].info.dtype));
      row["inputs"] = ins;
      row["outputs"] = outs;
      row["half"] = half;
      layers.append(row);
    }
    py::dict result;
    result["layers"] = layers;
    result["graph"] = times.graph;
    return result;
  }

  py::list graphs() { return graph_rows(engine_->graphs(), "eager_runs"); }

  std::shared_ptr<DeviceArray> to_device(const py::object& obj) {
    py::array a = py::array::ensure(obj, py::array::c_style);
    if (!a) throw InputError("to_device: expected an array");
    TensorInfo info;
    info.dtype = dtype_from_numpy(a.dtype(), "to_device");
    for (py::ssize_t d = 0; d < a.ndim(); ++d) info.shape.push_back(a.shape(d));
    auto array = std::make_shared<DeviceArray>(engine_, info);
    if (info.bytes() != 0) {
      py::gil_scoped_release release;
      engine_->device()->array_from_host(array->data(), a.data(), info.bytes());
    }
    return array;
  }

  // The plan of: the given inputs (arrays: their shapes and value inputs' values), else the given
  // shapes, else the declared ones.
  std::shared_ptr<const Plan> plan_of(const py::object& shapes, const py::object& arrays) {
    if (!arrays.is_none()) return plan_checked(read_inputs(arrays.cast<py::list>(), *engine_));
    const std::vector<Shape> s = shapes.is_none() ? engine_->default_shapes() : shapes.cast<std::vector<Shape>>();
    py::gil_scoped_release release;
    return engine_->plan_for(s);
  }

  py::list plan(const py::object& shapes, const py::object& arrays) { return plan_rows(*plan_of(shapes, arrays)); }

  py::dict memory(const py::object& shapes, const py::object& arrays) {
    auto plan = plan_of(shapes, arrays);
    py::dict d;
    d["arena_bytes"] = plan->arena_bytes;
    d["naive_bytes"] = plan->naive_bytes;
    d["workspace_bytes"] = plan->workspace_bytes;
    return d;
  }

  std::vector<Shape> default_shapes() const { return engine_->default_shapes(); }

  py::dict planner_report() const {
    const PlannerReport report = engine_->backend().planner_report();
    py::dict d;
    for (const auto& kv : report.counters) d[py::str(kv.first)] = kv.second;
    d["plan_cache"] = report.cache_path.empty() ? py::object(py::none()) : py::object(py::str(report.cache_path));
    d["warnings"] = py::cast(report.warnings);
    const PlanStats plans = engine_->plan_stats();
    d["plans_built"] = plans.built;
    d["plans_reused"] = plans.reused;
    d["plans_evicted"] = plans.evicted;
    d["plans_kept"] = plans.kept;
    d["max_plans"] = plans.max_plans;
    // Note [staged plans]: each stage's and body's plans, counted like the model's own.
    py::list stages;
    for (const StageStats& st : engine_->stage_stats()) {
      py::dict row;
      row["stage"] = st.path;
      row["plans_built"] = st.plans.built;
      row["plans_reused"] = st.plans.reused;
      row["plans_evicted"] = st.plans.evicted;
      row["plans_kept"] = st.plans.kept;
      stages.append(row);
    }
    d["stages"] = stages;
    d["plans_kept_total"] = engine_->plans_kept_total();  // the model's own, its stages' and bodies'; bounded by max_plans
    return d;
  }

  void set_max_plans(const py::object& n) {
    const size_t count = positive_count(n, "max_plans");
    py::gil_scoped_release release;
    engine_->set_max_plans(count);
  }

  std::vector<int> value_inputs() const { return engine_->value_inputs(); }
  std::vector<std::string> host_layers() const { return engine_->host_layers(); }

 private:
  // The plan for these inputs, after the engine checked their count and shapes.
  std::shared_ptr<const Plan> plan_checked(const RunInputs& inputs) {
    engine_->check_inputs(inputs.infos());
    std::vector<Shape> shapes;
    for (const InputArg& a : inputs.args) shapes.push_back(a.info.shape);
    py::gil_scoped_release release;
    return engine_->plan_for(engine_->key_of(shapes, inputs.io()));
  }

  // Shared with the DeviceArrays it hands out, which keep it alive.
  std::shared_ptr<Engine> engine_;
  std::vector<ValueKind> input_kinds_;  // Note [sequences]: empty when every input is a tensor
  std::vector<DType> input_elems_;      // each input's dtype (a sequence's or optional's element type)
  std::vector<std::pair<std::string, double>> load_phases_;  // {phase, seconds} of the constructor
};

}  // namespace

py::list graph_rows(const std::vector<GraphStatus>& graphs, const char* eager_key) {
  py::list rows;
  for (const GraphStatus& g : graphs) {
    py::dict row;
    row["input_shapes"] = g.input_shapes;
    row["state"] = g.state;
    row["captures"] = g.captures;
    row["replays"] = g.replays;
    row[eager_key] = g.eager_runs;
    rows.append(row);
  }
  return rows;
}

void bind_engine(py::module_& m) {
  bind_device_array(m);
  m.def(
      "kernel_table", [](const std::string& device, const py::dict& options) {
        return kernel_dict(make_backend(device, options)->kernels());
      },
      py::arg("device"), py::arg("options"),
      "What a backend registers (as Engine.kernels), without a model: the support matrix's source.");
  py::class_<PyEngine>(m, "Engine")
      .def(py::init<const py::dict&, const std::string&, const py::dict&, const py::dict&, const py::object&>(),
           py::arg("ir"), py::arg("device") = "cpu", py::arg("options") = py::dict(), py::arg("passes") = py::dict(),
           py::arg("started") = py::none())
      .def("run", &PyEngine::run, py::arg("inputs"), py::arg("output") = "numpy",
           "Runs the graph on host or device arrays (graph-input order); returns the outputs in graph "
           "order, as numpy arrays or (output='device') DeviceArrays.")
      .def("profile", &PyEngine::profile, py::arg("inputs"), py::arg("repeat"),
           "Per-layer times (ms) of `repeat` runs: {'layers': [{name, op, algorithm, times_ms}], 'graph': bool}.")
      .def("graphs", &PyEngine::graphs,
           "Per plan run so far on a device: input_shapes, state, captures, replays, eager_runs.")
      .def("to_device", &PyEngine::to_device, py::arg("array"), "A DeviceArray copy of a host array.")
      .def("plan", &PyEngine::plan, py::arg("shapes") = py::none(), py::arg("inputs") = py::none(),
           "One dict per layer: name, op, inputs, outputs, algorithm, math, workspace, time_ms "
           "(measured, or None), rejected; for the given input arrays, else shapes, else the declared ones.")
      .def("memory", &PyEngine::memory, py::arg("shapes") = py::none(), py::arg("inputs") = py::none())
      .def("set_max_plans", &PyEngine::set_max_plans, py::arg("max_plans"),
           "How many plans the engine keeps (least recently used out first).")
      .def("host_layers", &PyEngine::host_layers,
           "The nodes that run on the host inside this device model's plans, each with why.")
      .def("value_inputs", &PyEngine::value_inputs,
           "Graph-input positions whose values join the plan key (run-time shape inputs).")
      .def("default_shapes", &PyEngine::default_shapes)
      .def("load_phases", &PyEngine::load_phases,
           "Seconds of the constructor's steps: engine: graph (IR -> Graph, weights copied), engine: "
           "backend, engine: build (validate, passes, constants upload, the declared shapes' plan).")
      .def("set_foreground", &PyEngine::set_foreground,
           "Note [background search]: the stream at the device's highest priority (a swapped-in candidate).")
      .def("kernels", &PyEngine::kernels,
           "The backend's kernel registrations: {op type: {'dtypes': [...], 'checks_nodes': bool, 'staged': bool}}.")
      .def("planner_report", &PyEngine::planner_report,
           "The planner's counters (timing_runs, cache_hits, ...), the plan cache file and the "
           "warnings not reported before.");
  m.def("pass_names", &pass_names, "The rewrite passes, in the order they run.");
}

// One row per layer (Model.plan(), Tuner.plan()).
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
    row["op"] = layer.node->op_key();
    row["inputs"] = shapes_list(ins);
    row["outputs"] = shapes_list(outs);
    row["algorithm"] = layer.algorithm;
    row["math"] = layer.math;
    row["time_ms"] = layer.time_ms < 0 ? py::object(py::none()) : py::object(py::float_(layer.time_ms));
    row["workspace"] = layer.workspace_bytes;
    // Note [run-time fallback]: what runs now, once the planned kernel failed at run time.
    py::list fallbacks;
    if (const auto* fallback = dynamic_cast<const FallbackKernel*>(layer.kernel.get())) {
      const FallbackKernel::State now = fallback->state();
      if (!now.failed.empty()) {
        row["algorithm"] = now.algorithm;
        row["math"] = now.math;
        row["time_ms"] = py::none();
        row["workspace"] = now.workspace_bytes;
        for (const Rejected& r : now.failed) fallbacks.append(py::make_tuple(r.algorithm, r.reason));
      }
    }
    row["fallbacks"] = fallbacks;
    row["scratch"] = layer.scratch_bytes;
    row["rejected"] = rejected;
    rows.append(row);
  }
  if (plan.staged_at) {  // Note [staged plans]: where the plan stops, and why
    py::dict row;
    row["name"] = plan.staged_at->name;
    row["op"] = plan.staged_at->op_type;
    row["inputs"] = py::list();
    row["outputs"] = py::list();
    // Note [device staged kernels]: on a device, the kernel it runs on, or why the host runs it.
    std::string runs = "the engine runs it";
    if (plan.stage_kernel) {
      runs = "it runs on a device kernel (" + plan.stage_algorithm + "), its count read back with one small copy";
    } else if (plan.device && !plan.stage_host_reason.empty()) {
      runs = "the engine runs it on the host (" + plan.stage_host_reason + ")";
    }
    row["algorithm"] = "staged: " + plan.stage_reason + "; " + runs +
                       ", then plans the rest for the shapes it gives (no CUDA graph spans it)";
    row["math"] = "";
    row["time_ms"] = py::none();
    row["workspace"] = plan.stage_workspace;
    row["fallbacks"] = py::list();
    row["scratch"] = 0;
    row["rejected"] = py::list();
    rows.append(row);
  }
  return rows;
}

}  // namespace dnnx
