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

// A sticky error (is_sticky: an illegal address, a faulted kernel) is a DeviceLostError, as is a
// failed cuDNN or cuBLAS call that a sticky error of an earlier kernel caused.
void check(cudaError_t status, const char* call);
void check(cudnnStatus_t status, const char* call);
void check(cublasStatus_t status, const char* call);

// Whether `status` leaves the CUDA context unusable for the rest of the process.
bool is_sticky(cudaError_t status);

// After a kernel launch: a bad launch configuration shows here, not at the next sync.
void check_launch(const char* kernel);

// The library's name for a status, for messages and rejected-candidate reasons.
const char* status_name(cudnnStatus_t status);

}  // namespace dnnx::cuda
