// What every CUDA kernel of one model shares: the device, its stream and library handles, and
// the model's options. Owned by the CudaBackend; kernels keep a pointer to it (the backend
// outlives every plan of its engine).
#pragma once
#include <string>

#include "backends/cuda/cuda_handles.h"
#include "core/device_options.h"

namespace dnnx::cuda {

struct CudaContext {
  DeviceOptions options;
  std::string device_name;  // "NVIDIA H200"
  int compute_capability = 0;  // 90 for sm_90
  CudaStream stream;            // every kernel and copy of the model is queued here
  CudnnHandle cudnn;            // bound to `stream`
  CublasHandle cublas;          // bound to `stream`, fp32 math (no TF32)
};

}  // namespace dnnx::cuda
