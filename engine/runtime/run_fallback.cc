#include "runtime/run_fallback.h"

#include "runtime/host_fallback.h"
#include "runtime/size_check.h"

namespace dnnx {

FallbackKernel::FallbackKernel(const Backend& backend, const Backend* host, const Node& node,
                               std::vector<ValueInfo> inputs, std::vector<TensorInfo> outputs,
                               KernelChoice& choice)
    : backend_(backend), host_(host), node_(node), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
      kernel_(std::move(choice.kernel)) {
  state_.algorithm = choice.algorithm;
  state_.math = choice.math;
  state_.workspace_bytes = choice.workspace_bytes;
  candidate_ = choice.candidate;
}

void FallbackKernel::run(const KernelArgs& args) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (;;) {
    try {
      kernel_->run(args);
      return;
    } catch (const DeviceLostError&) {
      throw;  // nothing can run on this device again
    } catch (const DeviceError& e) {
      // Inside a graph capture nothing may be planned (no allocation can be recorded): the
      // capture fails, the plan stays eager, and the next eager run falls back.
      const DeviceServices* device = backend_.device();
      if (device && device->capturing()) throw;
      replace(e.what());  // then the loop runs the new kernel on the same buffers
    }
  }
}

void FallbackKernel::replace(const std::string& error) const {
  state_.failed.push_back({state_.algorithm, "failed at run time: " + error});
  if (!candidate_.empty()) avoid_.push_back(candidate_);
  std::string history;
  for (const Rejected& r : state_.failed) history += (history.empty() ? "" : "; ") + r.algorithm + " " + r.reason;
  KernelChoice next;
  std::string backend_refusal;
  if (!on_host_ && !candidate_.empty()) {  // a kernel with no candidate name has no alternative there
    try {
      // The node's scratch (a fused layer's own activation) sits ahead of the workspace, as before.
      next = backend_.replan_node(node_, inputs_, outputs_, avoid_, workspace_cap_);
      if (add_sat(next.scratch_bytes, next.workspace_bytes) > workspace_cap_) {
        throw UnsupportedModelError("its next kernel needs more workspace than the run holds");
      }
    } catch (const DeviceLostError&) {
      throw;
    } catch (const Error& e) {
      backend_refusal = e.what();
      next.kernel.reset();
    }
  }
  if (!next.kernel) {
    if (on_host_ || !host_) {
      throw DeviceError(node_.where() + ": every kernel failed at run time (" + history + ")" +
                        (backend_refusal.empty() ? "" : "; " + backend_refusal));
    }
    try {
      next = plan_on_host(backend_, *host_, node_, inputs_, outputs_, "run-time fallback: " + history);
    } catch (const Error& e) {
      throw DeviceError(node_.where() + ": its kernel failed at run time (" + history + ")" +
                        (backend_refusal.empty() ? "" : "; " + backend_refusal) + "; the host cannot run it: " +
                        e.what());
    }
    on_host_ = true;
  }
  retired_.push_back(std::move(kernel_));
  kernel_ = std::move(next.kernel);
  candidate_ = next.candidate;
  state_.algorithm = next.algorithm;
  state_.math = next.math;
  state_.workspace_bytes = next.workspace_bytes;
}

FallbackKernel::State FallbackKernel::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

}  // namespace dnnx
