// What every CUDA kernel of one model shares: the device, its stream and library handles, and
// the model's options. Owned by the CudaBackend; kernels keep a pointer to it (the backend
// outlives every plan of its engine).
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/runtime/cuda_handles.h"
#include "backends/cuda/search/plan_cache.h"
#include "backends/cuda/search/search_scratch.h"
#include "backends/cuda/backend/planner_stats.h"
#include "backends/cuda/backend/test_hooks.h"
#include "ir/tensor.h"
#include "runtime/device_options.h"

namespace dnnx::cuda {

// The half type a precision stores (Note [half storage]): Float16 for "fp16", BFloat16 for
// "bf16", Float32 (no half storage) for "fp32" and "tf32". CudaBackend::half_storage() is this
// of the model's precision; the kernels read the type of each value from its dtype instead.
inline DType precision_half_type(Precision p) {
  if (p == Precision::Fp16) return DType::Float16;
  if (p == Precision::Bf16) return DType::BFloat16;
  return DType::Float32;
}
// Whether `p` stores halves ("fp16" or "bf16"): cuDNN and cuBLAS then take tensor-op math with
// fp32 accumulation, as for a half value.
inline bool half_precision(Precision p) { return precision_half_type(p) != DType::Float32; }
// The plan's word for a half type in its math texts: "bf16" for BFloat16, else "fp16".
inline const char* half_storage_name(DType half) { return half == DType::BFloat16 ? "bf16" : "fp16"; }

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
  // What the model holds on the device, within options.memory_limit (Note [memory limit]).
  std::unique_ptr<MemoryBudget> memory = std::make_unique<MemoryBudget>(0);
  // The timed searches' buffers, kept between the layers of one plan (Note [search scratch]);
  // declared after `memory`, whose budget its buffers give back to.
  std::unique_ptr<SearchScratch> search_scratch = std::make_unique<SearchScratch>();
  // Note [run-time fallback]: while CudaBackend::replan_node plans a node again, the candidates
  // that failed at run time (KernelChoice::candidate); empty otherwise.
  std::vector<std::string> avoid;
  bool avoided(const std::string& candidate) const {
    return std::find(avoid.begin(), avoid.end(), candidate) != avoid.end();
  }
};

// Device memory of `bytes` (null for 0) taken from the model's budget: DeviceError naming `what`
// when the budget or the device has no room.
// Idle search scratch is let go first where there is no room (Note [search scratch]).
inline DeviceMemory device_alloc(const CudaContext& ctx, size_t bytes, const char* what) {
  if (bytes == 0) return DeviceMemory();
  if (!ctx.memory->try_take(bytes)) {
    release_idle_search_scratch(ctx);
    ctx.memory->take(bytes, what);
  }
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation && release_idle_search_scratch(ctx)) {
    cudaGetLastError();  // not sticky: clear it before the second try
    status = cudaMalloc(&ptr, bytes);
  }
  if (status != cudaSuccess) ctx.memory->give(bytes);
  check(status, what);
  return DeviceMemory(ptr, CudaFree{ctx.memory.get(), bytes});
}

}  // namespace dnnx::cuda
