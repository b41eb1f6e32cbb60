// Device backends from Python: probing the CUDA library, and the options a model asks of it.
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/device_library.h"

namespace dnnx {

namespace {

Precision precision_from_name(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "tf32") return Precision::Tf32;
  if (name == "fp16") return Precision::Fp16;
  throw InputError("precision must be 'fp32', 'tf32' or 'fp16', got '" + name + "'");
}

AlgoSearch algo_search_from_name(const std::string& name) {
  if (name == "heuristic") return AlgoSearch::Heuristic;
  if (name == "exhaustive") return AlgoSearch::Exhaustive;
  throw InputError("algo_search must be 'heuristic' or 'exhaustive', got '" + name + "'");
}

}  // namespace

DeviceOptions device_options_from_dict(const py::dict& options) {
  DeviceOptions o;
  if (options.contains("device")) o.device = options["device"].cast<int>();
  if (options.contains("workspace_limit")) o.workspace_limit = options["workspace_limit"].cast<size_t>();
  if (options.contains("precision")) o.precision = precision_from_name(options["precision"].cast<std::string>());
  if (options.contains("algo_search")) o.algo_search = algo_search_from_name(options["algo_search"].cast<std::string>());
  if (options.contains("deterministic")) o.deterministic = options["deterministic"].cast<bool>();
  if (options.contains("plan_cache")) o.plan_cache_path = options["plan_cache"].cast<std::string>();
  return o;
}

void bind_device(py::module_& m) {
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
}

}  // namespace dnnx
