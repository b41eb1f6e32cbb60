#include "runtime/host_fallback.h"

#include <mutex>

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

// The float32 twin of a half type (the host computes in float32), any other type unchanged.
TensorInfo host_type(const TensorInfo& t) {
  return is_half(t.dtype) ? TensorInfo{t.shape, DType::Float32} : t;
}

std::shared_ptr<ConstTensor> float_copy(const ConstTensor& half) {
  auto t = std::make_shared<ConstTensor>();
  t->info = host_type(half.info);
  t->data.resize(t->info.bytes());
  const uint16_t* src = half.as<uint16_t>();
  float* dst = t->as_mut<float>();
  for (int64_t i = 0; i < numel(half.info.shape); ++i) dst[i] = storage_to_float(src[i], half.info.dtype);
  return t;
}

// One input or output of the host kernel: where it reads or writes, and what crosses per run.
struct Staged {
  void* host = nullptr;         // what the host kernel reads or writes (float32 for a half value)
  size_t device_bytes = 0;      // copied per run (0: a constant or an omitted value)
  DType half = DType::Float32;  // Float16 / BFloat16: the device value is half, converted on the host
  std::unique_ptr<PinnedBuffer> wire;    // the device bytes, as they cross
  std::vector<float> floats;             // a half value's float32 twin
  std::shared_ptr<ConstTensor> constant; // a half constant's float32 copy
};

class HostLayerKernel final : public Kernel {
 public:
  HostLayerKernel(const DeviceServices& device, std::unique_ptr<Kernel> host, size_t workspace_bytes,
                  std::vector<Staged> inputs, std::vector<Staged> outputs, std::string where)
      : device_(device), host_(std::move(host)), where_(std::move(where)), workspace_(workspace_bytes),
        inputs_(std::move(inputs)), outputs_(std::move(outputs)), work_([this] { run_on_host(); }) {}

  void run(const KernelArgs& args) const override {
    {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      if (!failure_.empty()) throw DeviceError(where_ + ": the host layer failed on an earlier run: " + failure_);
    }
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].device_bytes) device_.queue_copy_to_host(inputs_[i].wire->data(), args.inputs[i], inputs_[i].device_bytes);
    }
    device_.queue_host_call(&work_);
    for (size_t o = 0; o < outputs_.size(); ++o) {
      if (args.outputs[o]) device_.copy_to_device(args.outputs[o], outputs_[o].wire->data(), outputs_[o].device_bytes);
    }
  }

 private:
  // On the driver's host thread: no exception may leave (it would end the process), so a failure
  // is kept and raised by the next run.
  void run_on_host() const {
    try {
      std::vector<const void*> ins;
      for (const Staged& s : inputs_) {
        if (is_half(s.half) && s.device_bytes) {
          convert(static_cast<const uint16_t*>(s.wire->data()), s.host, s.device_bytes / 2, s.half);
        }
        ins.push_back(s.host);
      }
      std::vector<void*> outs;
      for (const Staged& s : outputs_) outs.push_back(s.host);
      host_->run(KernelArgs{ins.data(), outs.data(), workspace_.data()});
      for (const Staged& s : outputs_) {
        if (!is_half(s.half)) continue;
        uint16_t* dst = static_cast<uint16_t*>(s.wire->data());
        const float* src = static_cast<const float*>(s.host);
        for (size_t i = 0; i < s.device_bytes / 2; ++i) dst[i] = float_to_storage(src[i], s.half);
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      failure_ = e.what();
    }
  }

  static void convert(const uint16_t* half, void* floats, size_t n, DType type) {
    float* dst = static_cast<float*>(floats);
    for (size_t i = 0; i < n; ++i) dst[i] = storage_to_float(half[i], type);
  }

  const DeviceServices& device_;
  std::unique_ptr<Kernel> host_;
  std::string where_;
  mutable std::vector<uint8_t> workspace_;
  std::vector<Staged> inputs_, outputs_;  // their buffers are written by runs: one at a time (the device turn)
  std::function<void()> work_;
  mutable std::mutex failure_mutex_;
  mutable std::string failure_;
};

// A device value staged for the host: its bytes cross through pinned memory; a half one gets a
// float32 twin that the host kernel uses.
Staged staged_value(const DeviceServices& device, const TensorInfo& t) {
  Staged s;
  s.device_bytes = t.bytes();
  s.wire = std::make_unique<PinnedBuffer>(device, s.device_bytes);
  s.half = is_half(t.dtype) ? t.dtype : DType::Float32;
  if (is_half(s.half)) {
    s.floats.resize(static_cast<size_t>(numel(t.shape)));
    s.host = s.floats.data();
  } else {
    s.host = s.wire->data();
  }
  return s;
}

}  // namespace

std::string host_fallback_reason(const Node& node, const Backend& backend, const Backend* host) {
  if (!host || backend.uses_host_memory()) return "";
  const std::string why = backend.unsupported_reason(node);
  if (why.empty() || !host->unsupported_reason(node).empty()) return "";
  return why;
}

std::string host_fallback_reason(const Node& node, const std::string& refusal, const Backend& backend,
                                 const Backend* host) {
  if (!host || backend.uses_host_memory() || !host->unsupported_reason(node).empty()) return "";
  const std::string prefix = node.where() + ": ";
  return refusal.rfind(prefix, 0) == 0 ? refusal.substr(prefix.size()) : refusal;
}

KernelChoice plan_on_host(const Backend& backend, const Backend& host, const Node& node,
                          const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs,
                          const std::string& reason) {
  const DeviceServices& device = device_services(backend, "a host layer");
  std::vector<Staged> staged_in;
  std::vector<ValueInfo> host_in;
  for (const ValueInfo& v : inputs) {
    Staged s;
    ValueInfo h{host_type(v.info), v.constant, v.present};
    if (v.present && v.constant && is_half(v.info.dtype)) {
      s.constant = float_copy(*v.constant);
      h.constant = s.constant.get();
      s.host = s.constant->data.data();
    } else if (v.present && v.constant) {
      s.host = const_cast<uint8_t*>(v.constant->data.data());  // read only: the host bytes, uncopied
    } else if (v.present) {
      s = staged_value(device, v.info);
    }
    staged_in.push_back(std::move(s));
    host_in.push_back(h);
  }
  std::vector<Staged> staged_out;
  std::vector<TensorInfo> host_out;
  for (const TensorInfo& t : outputs) {
    staged_out.push_back(staged_value(device, t));
    host_out.push_back(host_type(t));
  }
  KernelChoice host_choice = host.plan_node(node, host_in, host_out);
  KernelChoice choice;
  choice.algorithm = "on the host: " + host_choice.algorithm + " (" + reason + ")";
  choice.math = host_choice.math.empty() ? "host fp32" : host_choice.math;
  choice.kernel = std::make_unique<HostLayerKernel>(device, std::move(host_choice.kernel),
                                                    host_choice.scratch_bytes + host_choice.workspace_bytes,
                                                    std::move(staged_in), std::move(staged_out), node.where());
  return choice;
}

}  // namespace dnnx
