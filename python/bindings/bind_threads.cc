// The CPU thread count (python/dnnx/threads.py): the size of the CPU backend's pool
// (Note [cpu threads] in engine/backends/cpu/runtime/thread_pool.cc).
#include "backends/cpu/runtime/thread_pool.h"
#include "bindings.h"

namespace dnnx {

void bind_threads(py::module_& m) {
  // Resizing waits for a job in flight, which may be another thread's run: release the GIL.
  m.def("set_num_threads", &set_cpu_threads, py::arg("n"), py::call_guard<py::gil_scoped_release>(),
        "Resizes the CPU backend's thread pool to n threads (the caller included).");
  m.def("get_num_threads", &cpu_threads, "The CPU backend's thread count.");
  m.def("blas_core_name", &blas_core_name, "The OpenBLAS kernels picked for this CPU (e.g. Haswell).");
}

}  // namespace dnnx
