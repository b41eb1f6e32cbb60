// What a model asks of a device backend, and the C entry points a device backend library
// exports (see core/device_library.h). No device header is needed to read it.
#pragma once
#include <cstddef>
#include <string>

namespace dnnx {

// Bumped whenever DeviceOptions or the entry points change, so that a stale library is refused.
// 3: Backend::half_storage, half_unsupported_reason; 4: training_ops(); 5: Backend::channels_last,
// the capture overload with edge copies, GradKernel::forward and GradArgs::kept; 6:
// KernelChoice::scratch_bytes; 7: TrainingOps::plan_update (the multi-tensor check and SGD) and
// copy_to_pinned
constexpr int kDeviceAbiVersion = 8;

enum class Precision { Fp32, Tf32, Fp16 };

// How the planner picks a convolution algorithm (see DESIGN.md, "The planner").
enum class AlgoSearch { Heuristic, Exhaustive };

struct DeviceOptions {
  int device = 0;                               // the GPU ordinal ("cuda:N")
  size_t workspace_limit = size_t{256} << 20;   // bytes one layer's workspace may take
  Precision precision = Precision::Fp32;
  AlgoSearch algo_search = AlgoSearch::Heuristic;
  bool deterministic = false;
  // The persistent plan cache (a JSON file, see backends/cuda/search/plan_cache.h); "" disables it.
  std::string plan_cache_path;
};

}  // namespace dnnx

// The entry points of a device backend library, resolved with dlsym (names in
// core/device_library.h). Each fills `error` (NUL-terminated, at most error_len bytes) when it
// fails; no C++ exception crosses them.
namespace dnnx {
class Backend;
}
// kDeviceAbiVersion of the library.
using dnnx_device_abi_version_fn = int();
// The number of usable devices, or -1 with the reason in `error` (no driver, no GPU, ...).
using dnnx_device_probe_fn = int(char* error, size_t error_len);
// A new backend (owned by the caller, deleted through Backend's virtual destructor), or
// nullptr with the reason in `error`.
using dnnx_device_create_fn = dnnx::Backend*(const dnnx::DeviceOptions* options, char* error,
                                             size_t error_len);
