#include "runtime/host_fallback.h"

#include <mutex>

#include "ir/errors.h"

namespace dnnx {

namespace {

// Page-locked host memory of a device backend.
class PinnedBuffer {
 public:
  PinnedBuffer(const DeviceServices& device, size_t bytes) : device_(device), data_(device.allocate_pinned(bytes)) {}
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { device_.release_pinned(data_); }
  void* data() const { return data_; }

 private:
  const DeviceServices& device_;
  void* data_;
};

class HostLayerKernel final : public Kernel {
 public:
  HostLayerKernel(const DeviceServices& device, KernelChoice host_choice, const std::vector<ValueInfo>& inputs,
                  const std::vector<TensorInfo>& outputs, std::string where)
      : device_(device), host_(std::move(host_choice.kernel)), where_(std::move(where)),
        workspace_(host_choice.scratch_bytes + host_choice.workspace_bytes) {
    for (const ValueInfo& v : inputs) {
      Staged s;
      if (v.present && v.constant) {
        s.host = v.constant->data.data();  // the host bytes: nothing to copy
      } else if (v.present) {
        s.bytes = v.info.bytes();
        s.buffer = std::make_unique<PinnedBuffer>(device_, s.bytes);
        s.host = s.buffer->data();
      }
      inputs_.push_back(std::move(s));
    }
    for (const TensorInfo& t : outputs) {
      Staged s;
      s.bytes = t.bytes();
      s.buffer = std::make_unique<PinnedBuffer>(device_, s.bytes);
      s.host = s.buffer->data();
      outputs_.push_back(std::move(s));
    }
    work_ = [this] { run_on_host(); };
  }

  void run(const KernelArgs& args) const override {
    {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      if (!failure_.empty()) throw DeviceError(where_ + ": the host layer failed on an earlier run: " + failure_);
    }
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].buffer) device_.queue_copy_to_host(inputs_[i].buffer->data(), args.inputs[i], inputs_[i].bytes);
    }
    device_.queue_host_call(&work_);
    for (size_t o = 0; o < outputs_.size(); ++o) {
      if (args.outputs[o]) device_.copy_to_device(args.outputs[o], outputs_[o].host, outputs_[o].bytes);
    }
  }

 private:
  struct Staged {
    const void* host = nullptr;  // what the host kernel reads or writes
    size_t bytes = 0;            // copied per run (0: a constant, or an omitted input)
    std::unique_ptr<PinnedBuffer> buffer;
  };

  // On the driver's host thread: no exception may leave (it would end the process), so a failure
  // is kept and raised by the next run.
  void run_on_host() const {
    std::vector<const void*> ins;
    for (const Staged& s : inputs_) ins.push_back(s.host);
    std::vector<void*> outs;
    for (const Staged& s : outputs_) outs.push_back(const_cast<void*>(s.host));
    try {
      host_->run(KernelArgs{ins.data(), outs.data(), workspace_.data()});
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      failure_ = e.what();
    }
  }

  const DeviceServices& device_;
  std::unique_ptr<Kernel> host_;
  std::string where_;
  mutable std::vector<uint8_t> workspace_;
  std::vector<Staged> inputs_, outputs_;
  std::function<void()> work_;
  mutable std::mutex failure_mutex_;
  mutable std::string failure_;
};

}  // namespace

std::string host_fallback_reason(const Node& node, const Backend& backend, const Backend* host) {
  if (!host || backend.uses_host_memory()) return "";
  const std::string why = backend.unsupported_reason(node);
  if (why.empty() || !host->unsupported_reason(node).empty()) return "";
  return why;
}

KernelChoice plan_on_host(const Backend& backend, const Backend& host, const Node& node,
                          const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs,
                          const std::string& reason) {
  for (const ValueInfo& v : inputs) {
    if (v.present && v.info.dtype == DType::Float16) {
      node_fail<UnsupportedModelError>(node, "runs on the host (" + reason + "), which has no float16 kernels");
    }
  }
  KernelChoice host_choice = host.plan_node(node, inputs, outputs);
  KernelChoice choice;
  choice.algorithm = "on the host: " + host_choice.algorithm + " (" + reason + ")";
  choice.math = host_choice.math.empty() ? "host" : host_choice.math;
  choice.kernel = std::make_unique<HostLayerKernel>(device_services(backend, "a host layer"), std::move(host_choice),
                                                    inputs, outputs, node.where());
  return choice;
}

}  // namespace dnnx
