// What every CUDA kernel of one model shares: the device, its stream and library handles, and
// the model's options. Owned by the CudaBackend; kernels keep a pointer to it (the backend
// outlives every plan of its engine).
#pragma once
#include <memory>
#include <string>

#include "backends/cuda/runtime/cuda_handles.h"
#include "backends/cuda/search/plan_cache.h"
#include "backends/cuda/backend/planner_stats.h"
#include "backends/cuda/backend/test_hooks.h"
#include "runtime/device_options.h"

namespace dnnx::cuda {

struct CudaContext {
  DeviceOptions options;
  std::string device_name;  // "NVIDIA H200"
  int compute_capability = 0;  // 90 for sm_90
  CudaStream stream;            // every kernel and copy of the model is queued here
  CudnnHandle cudnn;            // bound to `stream`
  CublasHandle cublas;          // bound to `stream`; math mode from options.precision (blas.h)
  CublasLtHandle cublas_lt;     // Gemm's fused epilogues; compute type from options.precision
  // The planner's bookkeeping. Kernels hold a const context; planning writes through these.
  std::unique_ptr<PlannerStats> stats = std::make_unique<PlannerStats>();
  std::unique_ptr<PlanCache> plan_cache;  // null when options.plan_cache_path is ""
  TestHooks hooks;
};

}  // namespace dnnx::cuda
