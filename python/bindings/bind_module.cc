// The _core extension module: the engine's C++ API as seen from python/dnnx.
#include <pybind11/stl.h>

#include "bindings.h"
#include "backends/cpu/cpu_backend.h"
#include "ops/op.h"
#include "runtime/plan_folding.h"

namespace dnnx {

PYBIND11_MODULE(_core, m) {
  m.doc() = "dnnx C++ core: graph, planner, executor, the CPU backend and the device-library loader";
  set_folding_host(std::make_shared<CpuBackend>());  // shape computations fold on the host (plan_folding.h)
  bind_errors(m);
  bind_engine(m);
  bind_device(m);
  bind_train(m);
  bind_threads(m);
  m.def("supported_ops", [] { return op_registry().names(); }, "Op types the registry knows, sorted.");
  m.def(
      "op_definitions",
      [] {
        py::dict out;
        for (const std::string& name : op_registry().names()) {
          const OpDef* def = op_registry().find(name);
          py::dict d;
          d["min_opset"] = def->min_opset;
          d["view"] = def->aliases_input0;
          d["value_shaped"] = def->value_shaped;  // run by the engine between plan stages (Note [staged plans])
          d["trainability_check"] = static_cast<bool>(def->untrainable);
          out[py::str(name)] = d;
        }
        return out;
      },
      "{op type: {min_opset, view, trainability_check}} of the ops a model may contain (fused ops left out).");
}

}  // namespace dnnx
