// Note [run-time fallback]: a layer of a device plan whose kernel fails when it is queued (a
// cuDNN or cuBLAS call that returns an error status at run time: an internal allocation that
// fails under memory pressure, an algorithm the library refuses for these buffers) gives way to
// the next candidate, as at plan time: the backend plans the node again without the candidates
// that failed (Backend::replan_node), within the workspace the run already holds; when the
// backend has none left, the node runs on the host (Note [host fallback]). The layer then runs
// again on the same buffers, so the run returns the right result and the model stays usable;
// plan() shows the layer's kernel now and, under "fallbacks", what failed and why.
// A sticky device error (DeviceLostError: an illegal address, a kernel that faulted) is never
// retried: the device's context is lost, and the error says the process must restart. An
// asynchronous fault shows only at a later call (often the run's final wait): kernels are
// queued ahead of the device, so it names the layer only when it showed while that layer was
// queued (CUDA_LAUNCH_BLOCKING=1 makes every launch wait, and so names the faulting layer).
// The first run of a plan is always queued layer by layer (Note [device runs]); a later failure
// inside a graph capture leaves that plan eager, and the next eager run falls back as above.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace dnnx {

class FallbackKernel final : public Kernel {
 public:
  // `choice` as the backend planned it for `node` with these types (its kernel moves in); `host`
  // (may be null) runs the node when the backend has no other candidate.
  FallbackKernel(const Backend& backend, const Backend* host, const Node& node, std::vector<ValueInfo> inputs,
                 std::vector<TensorInfo> outputs, KernelChoice& choice);

  void run(const KernelArgs& args) const override;

  // After planning: the run's shared workspace (Plan::workspace_bytes), which bounds a new kernel's
  // scratch and workspace.
  void set_workspace_cap(size_t bytes) { workspace_cap_ = bytes; }

  struct State {
    std::string algorithm, math;
    size_t workspace_bytes = 0;
    std::vector<Rejected> failed;  // each kernel that failed at run time, with the error
  };
  // What runs now, for plan(); `failed` is empty while the planned kernel has not failed.
  State state() const;

 private:
  // Swaps in the next candidate after the current one failed with `error`; throws DeviceError
  // naming every failure when there is none.
  void replace(const std::string& error) const;

  const Backend& backend_;
  const Backend* host_;
  const Node& node_;
  std::vector<ValueInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  size_t workspace_cap_ = 0;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Kernel> kernel_;
  mutable std::vector<std::unique_ptr<Kernel>> retired_;  // a recorded graph may still use their buffers
  mutable State state_;
  mutable std::string candidate_;           // KernelChoice::candidate of what runs now
  mutable std::vector<std::string> avoid_;  // the candidates that failed
  mutable bool on_host_ = false;
};

}  // namespace dnnx
