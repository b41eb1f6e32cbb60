#include "backends/cuda/runtime/nvtx_layers.h"

namespace dnnx::cuda {

namespace {

class NvtxKernel final : public Kernel {
 public:
  NvtxKernel(nvtxDomainHandle_t domain, const std::string& label, std::unique_ptr<Kernel> inner)
      : domain_(domain), inner_(std::move(inner)) {
    attributes_.version = NVTX_VERSION;
    attributes_.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes_.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes_.message.registered = nvtxDomainRegisterStringA(domain, label.c_str());
  }

  void run(const KernelArgs& args) const override {
    nvtxDomainRangePushEx(domain_, &attributes_);
    const RangeEnd end{domain_};  // pops on the way out, a DeviceError's too
    inner_->run(args);
  }

 private:
  struct RangeEnd {
    nvtxDomainHandle_t domain;
    ~RangeEnd() { nvtxDomainRangePop(domain); }
  };

  nvtxDomainHandle_t domain_;
  nvtxEventAttributes_t attributes_ = {};
  std::unique_ptr<Kernel> inner_;
};

}  // namespace

std::unique_ptr<Kernel> in_nvtx_range(const NvtxDomain& domain, const Node& node, std::unique_ptr<Kernel> kernel) {
  if (!kernel) return kernel;
  const std::string label = node.name.empty() ? node.op_type : node.name + " (" + node.op_type + ")";
  return std::make_unique<NvtxKernel>(domain.get(), label, std::move(kernel));
}

}  // namespace dnnx::cuda
