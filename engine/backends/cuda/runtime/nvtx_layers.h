// NVTX ranges that name every layer, so that Nsight Systems shows the model's structure: each
// planned kernel is wrapped so that the work it queues sits in a range "conv1 (Conv)" of the
// domain "dnnx" (nvtx3, header-only: without a tool attached a range costs a few nanoseconds).
// An eager run shows the ranges on every run; with CUDA graphs they appear on a plan's first
// (eager) run and its capture, and a replay is one launch: load with cuda_graph=False to see
// the layers of every run.
#pragma once
#include <memory>

#include <nvtx3/nvToolsExt.h>

#include "runtime/backend.h"

namespace dnnx::cuda {

class NvtxDomain {
 public:
  NvtxDomain() : domain_(nvtxDomainCreateA("dnnx")) {}
  NvtxDomain(const NvtxDomain&) = delete;
  NvtxDomain& operator=(const NvtxDomain&) = delete;
  ~NvtxDomain() { nvtxDomainDestroy(domain_); }
  nvtxDomainHandle_t get() const { return domain_; }

 private:
  nvtxDomainHandle_t domain_;
};

// `kernel`, its runs inside a range named after `node`. The domain outlives the kernel (the
// backend owns both, and plans die before their backend).
std::unique_ptr<Kernel> in_nvtx_range(const NvtxDomain& domain, const Node& node, std::unique_ptr<Kernel> kernel);

}  // namespace dnnx::cuda
