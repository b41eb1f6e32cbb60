// Status checks for the CUDA runtime, cuDNN and cuBLAS: a failed call becomes a DeviceError
// naming the call and the library's own status text. The executor prefixes the layer's name
// (runtime/executor.cc), so a kernel names only the call.
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "ir/errors.h"

namespace dnnx::cuda {

void check(cudaError_t status, const char* call);
void check(cudnnStatus_t status, const char* call);
void check(cublasStatus_t status, const char* call);

// After a kernel launch: a bad launch configuration shows here, not at the next sync.
void check_launch(const char* kernel);

// The library's name for a status, for messages and rejected-candidate reasons.
const char* status_name(cudnnStatus_t status);

}  // namespace dnnx::cuda
