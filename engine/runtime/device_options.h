// What a model asks of a device backend, and the C entry points a device backend library
// exports (see runtime/device_library.h). No device header is needed to read it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dnnx {

// The rule: bump it on any change to what the core and a device library share (DeviceOptions,
// the entry points below, Backend, TrainingOps and the types they pass), so that a stale
// library is refused at load instead of crashing.
constexpr int kDeviceAbiVersion = 29;  // 16: memory_limit, replan_node; 17: bf16 (DType, Precision); 18: channel multiple; 19: every ONNX dtype (DType); 20: op domains (Node::domain, Graph::opsets); 21: string tensors (DType, ConstTensor, KernelArgs); 22: graph attributes (Attribute, Node); 23: AlgoSearch::Background, DeviceOptions::runs_in_flight; 24: Backend::channels_last_forms; 25: ChannelsLastForms::channel_concat; 26: staged kernels (Backend::plan_staged_node, KernelEntry::staged); 27: DeviceOptions::runs_started and background_priority, DeviceServices::set_priority; 28: KernelChoice::overwrites_input; 29: ChannelsLastForms::pixel_means

enum class Precision { Fp32, Tf32, Fp16, Bf16 };

// How the planner picks a layer's algorithm (docs/architecture.md, "Algorithm search"). Auto (the
// default): exhaustive where it was measured to pay, heuristic elsewhere (Note [auto search] in
// backends/cuda/search/conv_algo.cc). Background (Note [background search],
// python/dnnx/_background_search.py): the plan cache's exhaustive choices where it has them,
// heuristic elsewhere, timing nothing; a searcher engine beside it times the rest.
enum class AlgoSearch { Heuristic, Exhaustive, Auto, Background };

// workspace_limit's default: the backend's own choice (CUDA: Note [auto search]).
constexpr size_t kAutoWorkspace = static_cast<size_t>(-1);

struct DeviceOptions {
  int device = 0;                               // the GPU ordinal ("cuda:N")
  size_t workspace_limit = kAutoWorkspace;  // bytes one layer's workspace may take; kAutoWorkspace: the backend's
  // Bytes the model may hold on the device in all (constants, arena, workspace, the planner's
  // search buffers, kernels' own buffers); 0: no cap but the device's memory. Arrays handed to the
  // caller (run(output="device")) are the caller's and do not count.
  size_t memory_limit = 0;
  Precision precision = Precision::Fp32;
  AlgoSearch algo_search = AlgoSearch::Auto;
  bool deterministic = false;
  // The persistent plan cache (a JSON file, see backends/cuda/search/plan_cache.h); "" disables it.
  std::string plan_cache_path;
  // Note [background search]: set on a searcher engine only. Its timing waits, before each
  // candidate, until no foreground run of this process has work on the device (the count that
  // foreground_runs() keeps), and a timing that a foreground run overlapped (runs_started moved
  // on) is taken again; nullptr: time at once.
  const std::atomic<int>* runs_in_flight = nullptr;
  const std::atomic<uint64_t>* runs_started = nullptr;
  // The stream's scheduling priority: the device's lowest for the engines of a background search
  // (their kernels give way to a foreground run's as soon as blocks retire), else its highest.
  bool background_priority = false;
};

// Note [background search]: the foreground runs of this process with work on the device now (a
// run counts from its first kernel to its outputs' arrival: DeviceRunner::run), and how many
// have started so far. A run is foreground unless its thread works for a search.
std::atomic<int>& foreground_runs();
std::atomic<uint64_t>& foreground_starts();
// Marks the calling thread as a background search's (its runs are not foreground), or not.
void set_search_thread(bool on);
bool on_search_thread();

// The user's names for the options (device_options.cc holds the one list); each parse throws
// InputError (a ValueError in Python) naming the option and the allowed values.
Precision parse_precision(const std::string& name);      // "fp32", "tf32", "fp16", "bf16"
AlgoSearch parse_algo_search(const std::string& name);   // "auto", "heuristic", "exhaustive", "background"
std::string precision_name(Precision p);
std::string algo_search_name(AlgoSearch a);
std::vector<std::string> precision_names();
std::vector<std::string> algo_search_names();

// "cpu", "cuda" or "cuda:N" (any case): DeviceError for anything else.
struct DeviceKind {
  bool cuda = false;
  int index = 0;
};
DeviceKind parse_device(const std::string& text);

// "256MiB", "1.5 GB", "64 KB", "0" -> bytes; InputError naming `what` otherwise.
size_t parse_byte_size(const std::string& text, const std::string& what);
// $XDG_CACHE_HOME/dnnx/plan-cache.json, or ~/.cache/dnnx/plan-cache.json.
std::string default_plan_cache_path();
// A user's plan-cache path, "~" expanded and made absolute.
std::string plan_cache_file(const std::string& path);

}  // namespace dnnx

// The entry points of a device backend library, resolved with dlsym (names in
// runtime/device_library.h). Each fills `error` (NUL-terminated, at most error_len bytes) when it
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
