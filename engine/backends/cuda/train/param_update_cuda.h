// CUDA's ParamUpdate (runtime/training.h): the non-finite check and SGD of every trained parameter
// in two launches (Note [multi-tensor update] in param_update_cuda.cc).
#pragma once
#include <memory>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "runtime/training.h"

namespace dnnx::cuda {

std::unique_ptr<ParamUpdate> make_cuda_param_update(const CudaContext& ctx, const SgdOptions& options,
                                                    const std::vector<ParamSlot>& params);

}  // namespace dnnx::cuda
