// _core.Trainer: fine-tuning the last layers of a model on the CPU or a device backend
// (engine/train), numpy in and out.
// python/dnnx/finetune.py wraps it as Model.finetune()'s Tuner.
#include <cstring>

#include <pybind11/stl.h>

#include "backends/cpu/cpu_backend.h"
#include "bindings.h"
#include "run_inputs.h"
#include "runtime/device_library.h"
#include "runtime/passes/passes.h"
#include "train/trainable.h"
#include "train/trainer.h"

namespace dnnx {

namespace {

// The arrays of one call; kept alive (and contiguous) for as long as the Batch is used.
struct PyBatch {
  RunInputs inputs;  // host arrays, or device arrays on a CUDA trainer's device (run_inputs.h)
  py::array target;
  Batch batch;
};

py::array contiguous(const py::handle& obj, const std::string& what) {
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a) throw InputError(what + ": expected a numpy array");
  return a;
}

TensorInfo info_of(const py::array& a, const std::string& what) {
  TensorInfo info;
  info.dtype = dtype_from_numpy(a.dtype(), what);
  for (py::ssize_t d = 0; d < a.ndim(); ++d) info.shape.push_back(a.shape(d));
  return info;
}

PyBatch make_batch(const Trainer& trainer, const py::list& inputs, const py::object& target) {
  PyBatch b;
  try {
    b.inputs = read_inputs(inputs, trainer.backend(), trainer.graph().inputs);
  } catch (const InputError& e) {
    throw InputError(std::string("x: ") + e.what());
  }
  for (const InputArg& a : b.inputs.args) {
    b.batch.inputs.push_back(a.data);
    b.batch.infos.push_back(a.info);
    b.batch.memory.push_back(a.memory);
  }
  b.batch.streams = b.inputs.streams;
  b.target = contiguous(target, "y");
  b.batch.target = b.target.data();
  b.batch.target_info = info_of(b.target, "y");
  return b;
}

py::array to_numpy(const Shape& shape, const float* data) {
  py::array_t<float> out(shape);
  std::memcpy(out.mutable_data(), data, static_cast<size_t>(numel(shape)) * sizeof(float));
  return std::move(out);
}

// device: "cpu", or "cuda" with options["library"] and the device options (as a Model's
// backend, bind_engine.cc); the trainer's backend is its own (its own stream and handles).
std::unique_ptr<Backend> training_backend(const std::string& device, const py::dict& options) {
  if (device == "cpu") return std::make_unique<CpuBackend>();
  if (device == "cuda") {
    if (!options.contains("library")) throw DeviceError("device 'cuda': no backend library was given");
    return create_device_backend(options["library"].cast<std::string>(), device_options_from_dict(options));
  }
  throw DeviceError("finetune: device '" + device + "' is not supported ('cpu' or 'cuda')");
}

TrainerOptions trainer_options(const Graph& graph, const py::object& trainable, const std::string& loss,
                               const py::dict& sgd, const py::dict& passes, const py::dict& device_options) {
  TrainerOptions o;
  if (py::isinstance<py::str>(trainable)) {
    o.params = select_parameters(graph, trainable.cast<std::string>());
  } else {
    o.params = check_parameters(graph, trainable.cast<std::vector<std::string>>());
  }
  o.loss = loss_from_name(loss);
  o.scores_are_log_probs = loss == "nll";
  if (sgd.contains("momentum")) o.sgd.momentum = sgd["momentum"].cast<float>();
  if (sgd.contains("weight_decay")) o.sgd.weight_decay = sgd["weight_decay"].cast<float>();
  if (sgd.contains("nesterov")) o.sgd.nesterov = sgd["nesterov"].cast<bool>();
  for (auto item : passes) set_pass(o.head_passes, item.first.cast<std::string>(), item.second.cast<bool>());
  if (device_options.contains("precision_kept")) {  // Note [measured precision]: the head as the model plans it
    for (auto item : device_options["precision_kept"].cast<py::dict>()) {
      o.head_passes.keep_fp32[item.first.cast<std::string>()] = item.second.cast<std::string>();
    }
  }
  if (device_options.contains("cuda_graph")) o.device_graphs = device_options["cuda_graph"].cast<bool>();
  return o;
}

class PyTrainer {
 public:
  PyTrainer(const py::dict& ir, const py::object& trainable, const std::string& loss, const py::dict& sgd,
            const py::dict& passes, const std::string& device, const py::dict& device_options) {
    Graph graph = graph_from_ir(ir);
    TrainerOptions options = trainer_options(graph, trainable, loss, sgd, passes, device_options);
    std::unique_ptr<Backend> backend = training_backend(device, device_options);
    py::gil_scoped_release release;  // planning may time algorithms on the device
    trainer_ = std::make_unique<Trainer>(graph, std::move(options), std::move(backend));
  }

  std::vector<std::string> parameters() const { return trainer_->parameters(); }

  double step(const py::list& inputs, const py::object& target, float lr) {
    PyBatch b = make_batch(*trainer_, inputs, target);
    py::gil_scoped_release release;
    return trainer_->step(b.batch, lr);
  }

  py::tuple gradients(const py::list& inputs, const py::object& target) {
    PyBatch b = make_batch(*trainer_, inputs, target);
    double loss;
    {
      py::gil_scoped_release release;
      loss = trainer_->compute_gradients(b.batch);
    }
    py::dict grads;
    for (const std::string& name : trainer_->parameters()) {
      grads[py::str(name)] = to_numpy(trainer_->weight(name).info.shape, trainer_->gradient(name).data());
    }
    return py::make_tuple(loss, grads);
  }

  py::tuple evaluate(const py::list& inputs, const py::object& target) {
    PyBatch b = make_batch(*trainer_, inputs, target);
    LossValue v;
    {
      py::gil_scoped_release release;
      v = trainer_->evaluate(b.batch);
    }
    return py::make_tuple(v.loss, v.correct);
  }

  // {"layers": [{name, op, algorithm, stage, times_ms: [per repeat]}], "graph": measured on a
  // graph}: the parts of one step (Trainer::profile), as Engine.profile gives a run's layers.
  py::dict profile(const py::list& inputs, const py::object& target, float lr, int repeat) {
    PyBatch b = make_batch(*trainer_, inputs, target);
    StepProfile p;
    {
      py::gil_scoped_release release;
      p = trainer_->profile(b.batch, lr, repeat);
    }
    py::list layers;
    for (const StepPart& part : p.parts) {
      py::dict row;
      row["name"] = part.name;
      row["op"] = part.op;
      row["algorithm"] = part.algorithm;
      row["stage"] = part.stage;
      row["times_ms"] = part.ms;
      layers.append(row);
    }
    py::dict result;
    result["layers"] = layers;
    result["graph"] = p.graph;
    return result;
  }

  // Copies: on a device, read back from device memory now.
  py::dict weights() {
    py::dict out;
    for (const std::string& name : trainer_->parameters()) {
      const ConstTensor& w = trainer_->weight(name);
      out[py::str(name)] = to_numpy(w.info.shape, w.as<float>());
    }
    return out;
  }

  py::dict velocity() {
    py::dict out;
    for (const std::string& name : trainer_->parameters()) {
      out[py::str(name)] = to_numpy(trainer_->weight(name).info.shape, trainer_->velocity(name).data());
    }
    return out;
  }

  // Model.plan()'s rows for the frozen head, the tail's forward layers and its backward steps
  // (op "<Op> backward", in run order); "stage" says which.
  py::list plan(const py::object& shapes) {
    const std::vector<Shape> s = shapes.is_none() ? trainer_->default_shapes() : shapes.cast<std::vector<Shape>>();
    Trainer::Plans p;
    {
      py::gil_scoped_release release;
      p = trainer_->plans(s);
    }
    py::list rows;
    auto add = [&rows](const py::list& part, const char* stage) {
      for (const py::handle row : part) {
        row["stage"] = stage;
        rows.append(row);
      }
    };
    if (p.head) add(plan_rows(*p.head), "frozen");
    const Plan& tail = p.tail->plan();
    add(plan_rows(tail), "forward");
    const py::list forward = plan_rows(tail);
    for (const GradStep& step : p.tail->steps()) {
      py::dict row = forward[static_cast<size_t>(step.layer)].cast<py::dict>();
      row["op"] = row["op"].cast<std::string>() + " backward";
      row["algorithm"] = step.algorithm;
      row["math"] = "";
      row["time_ms"] = py::none();
      row["workspace"] = step.workspace_bytes;
      row["rejected"] = py::list();
      row["fallbacks"] = py::list();
      row["stage"] = "backward";
      rows.append(row);
    }
    return rows;
  }

  py::list graphs() { return graph_rows(trainer_->graphs(), "eager_steps"); }

  void set_weight(const std::string& name, const py::array_t<float, py::array::c_style | py::array::forcecast>& a) {
    trainer_->set_weight(name, a.data(), static_cast<size_t>(a.size()));
  }

  void set_velocity(const std::string& name, const py::array_t<float, py::array::c_style | py::array::forcecast>& a) {
    trainer_->set_velocity(name, a.data(), static_cast<size_t>(a.size()));
  }

  py::dict memory(const py::object& shapes) {
    const std::vector<Shape> s = shapes.is_none() ? trainer_->default_shapes() : shapes.cast<std::vector<Shape>>();
    TrainerMemory m;
    {
      py::gil_scoped_release release;
      m = trainer_->memory(s);
    }
    py::dict d;
    d["head_arena_bytes"] = m.head_arena_bytes;
    d["tail_activation_bytes"] = m.tail.activation_bytes;
    d["gradient_bytes"] = m.tail.gradient_bytes;
    d["workspace_bytes"] = m.tail.workspace_bytes;
    d["kept_bytes"] = m.tail.kept_bytes;
    d["optimizer_bytes"] = m.optimizer_bytes;
    d["keep_everything_bytes"] = m.keep_everything_bytes;
    return d;
  }

  py::dict layout() const {
    const GraphSplit& s = trainer_->split();
    std::vector<std::string> head, tail;
    for (const Node& n : s.head.nodes) head.push_back(n.name);
    for (const Node& n : s.tail.nodes) tail.push_back(n.name);
    py::dict d;
    d["frozen"] = head;
    d["trained"] = tail;
    return d;
  }

 private:
  std::unique_ptr<Trainer> trainer_;
};

}  // namespace

void bind_train(py::module_& m) {
  static py::handle non_finite = [&] {
    py::tuple bases = py::make_tuple(m.attr("DnnxError"), py::handle(PyExc_FloatingPointError));
    PyObject* cls = PyErr_NewException("dnnx.NonFiniteLossError", bases.ptr(), nullptr);
    m.attr("NonFiniteLossError") = py::handle(cls);
    return py::handle(cls);
  }();
  // Registered after bind_errors' translator, so it is tried first.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const NonFiniteLossError& e) {
      PyErr_SetString(non_finite.ptr(), e.what());
    }
  });
  py::class_<PyTrainer>(m, "Trainer")
      .def(py::init<const py::dict&, const py::object&, const std::string&, const py::dict&, const py::dict&,
                    const std::string&, const py::dict&>(),
           py::arg("ir"), py::arg("trainable"), py::arg("loss"), py::arg("sgd") = py::dict(),
           py::arg("passes") = py::dict(), py::arg("device") = "cpu", py::arg("device_options") = py::dict())
      .def("parameters", &PyTrainer::parameters, "The trained parameters' names.")
      .def("step", &PyTrainer::step, py::arg("inputs"), py::arg("target"), py::arg("lr"),
           "One SGD step; returns the batch loss.")
      .def("gradients", &PyTrainer::gradients, py::arg("inputs"), py::arg("target"),
           "(loss, {name: gradient}) without an update.")
      .def("evaluate", &PyTrainer::evaluate, py::arg("inputs"), py::arg("target"),
           "(loss, rows classified right), forward only.")
      .def("profile", &PyTrainer::profile, py::arg("inputs"), py::arg("target"), py::arg("lr"), py::arg("repeat"),
           "Per-part times of one step over `repeat` steps; the weights are put back.")
      .def("weights", &PyTrainer::weights)
      .def("velocity", &PyTrainer::velocity)
      .def("set_weight", &PyTrainer::set_weight, py::arg("name"), py::arg("value"))
      .def("set_velocity", &PyTrainer::set_velocity, py::arg("name"), py::arg("value"))
      .def("memory", &PyTrainer::memory, py::arg("shapes") = py::none())
      .def("plan", &PyTrainer::plan, py::arg("shapes") = py::none(),
           "Plan rows of the frozen head, the tail forward and the backward steps.")
      .def("graphs", &PyTrainer::graphs, "How each input shape's steps run on a device (empty on the CPU).")
      .def("layout", &PyTrainer::layout, "{'frozen': head node names, 'trained': tail node names}");
}

}  // namespace dnnx
