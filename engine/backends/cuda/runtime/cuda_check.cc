#include "backends/cuda/runtime/cuda_check.h"

#include <string>

namespace dnnx::cuda {

bool is_sticky(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

namespace {

[[noreturn]] void throw_lost(cudaError_t status, const std::string& call) {
  int device = -1;
  cudaGetDevice(&device);
  throw DeviceLostError(call + " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                        "): a sticky CUDA error, so the CUDA context of cuda:" + std::to_string(device) +
                        " is lost for the rest of this process; no model can use that GPU again until the "
                        "process restarts");
}

// After a library call failed: was the cause a sticky error of an earlier kernel?
void throw_if_lost(const char* call) {
  const cudaError_t last = cudaPeekAtLastError();
  if (is_sticky(last)) throw_lost(last, call);
}

}  // namespace

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  if (is_sticky(status)) throw_lost(status, call);
  cudaGetLastError();  // resets a non-sticky error, so that the model stays usable
  throw DeviceError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
}

void check(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw_if_lost(call);
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string message = std::string(call) + " failed: " + cudnnGetErrorString(status);
  if (detail[0]) message += " (" + std::string(detail) + ")";
  throw DeviceError(message);
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw_if_lost(call);
  throw DeviceError(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                    cublasGetStatusString(status) + ")");
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

const char* status_name(cudnnStatus_t status) { return cudnnGetErrorString(status); }

}  // namespace dnnx::cuda
