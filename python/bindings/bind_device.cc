// Device backends from Python: probing the CUDA library, and the options a model asks of it.
#include <pybind11/stl.h>

#include "bindings.h"
#include "runtime/device_library.h"
#include "runtime/device_start.h"

namespace dnnx {

namespace {

// workspace_limit, memory_limit: None (the default, `fallback`), an int of bytes, or a string
// such as "256MiB".
size_t bytes_from(const py::object& value, const char* what, size_t fallback) {
  if (value.is_none()) return fallback;
  if (py::isinstance<py::bool_>(value) || !(py::isinstance<py::int_>(value) || py::isinstance<py::str>(value))) {
    throw InputError(std::string(what) + ": expected bytes as an int or a string like '256MiB', got " +
                     py::repr(value).cast<std::string>());
  }
  if (py::isinstance<py::str>(value)) return parse_byte_size(value.cast<std::string>(), what);
  const long long bytes = value.cast<long long>();
  if (bytes < 0) throw InputError(std::string(what) + ": must not be negative, got " + std::to_string(bytes));
  return static_cast<size_t>(bytes);
}

// plan_cache: True (the default file), False/None (off), or a path (str or os.PathLike).
std::string plan_cache_from(const py::object& value) {
  if (value.is_none() || (py::isinstance<py::bool_>(value) && !value.cast<bool>())) return "";
  if (py::isinstance<py::bool_>(value)) return default_plan_cache_path();
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
    const std::string path = py::module_::import("os").attr("fspath")(value).cast<std::string>();
    if (!path.empty()) return plan_cache_file(path);
  }
  throw InputError("plan_cache: expected a file path, True (the default file) or False/None (off), got " +
                   py::repr(value).cast<std::string>());
}

}  // namespace

DeviceOptions device_options_from_dict(const py::dict& options) {
  if (!options.contains("device_options")) return DeviceOptions{};
  return options["device_options"].cast<DeviceOptions>();
}

void bind_device(py::module_& m) {
  // The members' names come from device_options.cc's one list (py::enum_ copies each name).
  py::enum_<Precision> precision(m, "Precision", "The arithmetic a device model may use (dnnx.load's precision=).");
  for (const std::string& name : precision_names()) precision.value(name.c_str(), parse_precision(name));
  py::enum_<AlgoSearch> algo_search(m, "AlgoSearch", "How the planner picks a layer's algorithm (dnnx.load's algo_search=).");
  for (const std::string& name : algo_search_names()) algo_search.value(name.c_str(), parse_algo_search(name));
  py::class_<DeviceOptions>(m, "DeviceOptions", "What a model asks of a device backend (made by device_options).")
      .def_readonly("device", &DeviceOptions::device)
      .def_property_readonly(
          "workspace_limit",
          [](const DeviceOptions& o) -> py::object {
            if (o.workspace_limit == kAutoWorkspace) return py::none();
            return py::int_(o.workspace_limit);
          },
          "Bytes; None: the backend's default (CUDA: Note [auto search], 4 GiB at fp32, 256 MiB otherwise).")
      .def_readonly("memory_limit", &DeviceOptions::memory_limit)
      .def_readonly("precision", &DeviceOptions::precision)
      .def_readonly("algo_search", &DeviceOptions::algo_search)
      .def_readonly("deterministic", &DeviceOptions::deterministic)
      .def_readonly("plan_cache", &DeviceOptions::plan_cache_path)
      .def("with_deterministic", [](DeviceOptions o, bool on) { o.deterministic = on; return o; }, py::arg("on"),
           "A copy with deterministic= set (a tuner asks for deterministic algorithms on its own).")
      .def(
          "as_searcher",
          [](DeviceOptions o) {
            o.algo_search = AlgoSearch::Exhaustive;
            o.runs_in_flight = &foreground_runs();
            o.runs_started = &foreground_starts();
            o.background_priority = true;
            return o;
          },
          "Note [background search]: a copy for the searcher engine: exhaustive, its timing waiting while "
          "a foreground run has work on the device (and taken again when one overlapped it), its stream at "
          "the device's lowest priority.")
      .def(
          "in_background",
          [](DeviceOptions o) {
            o.background_priority = true;
            return o;
          },
          "Note [background search]: a copy whose stream has the device's lowest priority (a candidate engine "
          "recording its graphs while requests run; Engine.set_foreground raises it once it serves them).")
      .def_property_readonly("searcher", [](const DeviceOptions& o) { return o.runs_in_flight != nullptr; })
      .def_readonly("background_priority", &DeviceOptions::background_priority)
      .def("__repr__", [](const DeviceOptions& o) {
        return "DeviceOptions(device=" + std::to_string(o.device) + ", precision='" + precision_name(o.precision) +
               "', workspace_limit=" +
               (o.workspace_limit == kAutoWorkspace ? std::string("None") : std::to_string(o.workspace_limit)) +
               ", memory_limit=" +
               std::to_string(o.memory_limit) + ", algo_search='" +
               algo_search_name(o.algo_search) + "', deterministic=" + (o.deterministic ? "True" : "False") +
               ", plan_cache='" + o.plan_cache_path + "')";
      });
  m.def(
      "device_options",
      [](const py::object& device, const std::string& precision, const py::object& workspace_limit,
         const std::string& algo_search, bool deterministic, const py::object& plan_cache,
         const py::object& memory_limit) {
        if (!py::isinstance<py::str>(device)) {
          throw DeviceError("device " + py::repr(device).cast<std::string>() +
                            " is not supported ('cpu', 'cuda' or 'cuda:N')");
        }
        const DeviceKind kind = parse_device(device.cast<std::string>());
        DeviceOptions o;
        o.device = kind.index;
        o.precision = parse_precision(precision);
        o.algo_search = parse_algo_search(algo_search);
        o.workspace_limit = bytes_from(workspace_limit, "workspace_limit", DeviceOptions{}.workspace_limit);
        o.memory_limit = bytes_from(memory_limit, "memory_limit", 0);
        o.deterministic = deterministic;
        o.plan_cache_path = plan_cache_from(plan_cache);
        if (!kind.cuda && o.precision != Precision::Fp32) {
          throw InputError("precision='" + precision + "' applies to device='cuda'; the CPU backend runs fp32");
        }
        if (!kind.cuda && !memory_limit.is_none()) {
          throw InputError("memory_limit applies to device='cuda' (it caps what the model holds on the GPU); on the "
                           "CPU a plan is refused only past the host's memory");
        }
        return py::make_tuple(kind.cuda ? "cuda" : "cpu", o);
      },
      py::arg("device") = "cpu", py::arg("precision") = "fp32", py::arg("workspace_limit") = py::none(),
      py::arg("algo_search") = "auto", py::arg("deterministic") = false, py::arg("plan_cache") = true,
      py::arg("memory_limit") = py::none(),
      "(kind, DeviceOptions) from dnnx.load's arguments, every one checked here: kind is 'cpu' or 'cuda'.");
  m.def("foreground_runs", [] { return foreground_runs().load(); },
        "Note [background search]: the foreground runs with work on the device now.");
  m.def("set_search_thread", &set_search_thread, py::arg("on"),
        "Note [background search]: marks the calling thread as a background search's (its runs are not "
        "foreground runs), or not.");
  m.def("precision_names", &precision_names, "The precision= names, in order.");
  m.def("algo_search_names", &algo_search_names, "The algo_search= names, in order.");
  m.def(
      "probe_device_library",
      [](const std::string& path) {
        DeviceProbe probe;
        {
          py::gil_scoped_release release;
          probe = probe_device_library(path);
        }
        return py::make_tuple(probe.available, probe.message);
      },
      py::arg("path"),
      "(available, message): loads the device library at `path` and asks it for devices; "
      "message describes them, or says why there are none.");
  // Note [overlapped device start] (runtime/device_start.h)
  py::class_<DeviceStart>(m, "DeviceStart")
      .def(py::init([](std::vector<std::string> preload, std::string library, const DeviceOptions& options) {
             return std::make_unique<DeviceStart>(std::move(preload), std::move(library), options);
           }),
           py::arg("preload"), py::arg("library"), py::arg("options"),
           "Starts opening the device backend on a thread of its own: dlopen `preload` (RTLD_GLOBAL), probe "
           "`library`, open its backend; Engine(started=...) takes it.")
      .def(
          "probe",
          [](DeviceStart& start) {
            DeviceProbe probe;
            {
              py::gil_scoped_release release;
              probe = start.probe();
            }
            return py::make_tuple(probe.available, probe.message);
          },
          "(available, message) as probe_device_library gives them, once the thread is done.")
      .def(
          "phases",
          [](const DeviceStart& start) {
            py::dict out;
            out["device start: libraries"] = start.libraries_seconds;
            out["device start: probe"] = start.probe_seconds;
            out["device start: open"] = start.open_seconds;
            return out;
          },
          "Seconds of the thread's steps (read once an Engine took the backend).");
}

}  // namespace dnnx
