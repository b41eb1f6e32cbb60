#include "backends/cuda/runtime/cuda_check.h"

#include <string>

namespace dnnx::cuda {

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // resets a non-sticky error, so that the model stays usable
  throw DeviceError(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
}

void check(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string message = std::string(call) + " failed: " + cudnnGetErrorString(status);
  if (detail[0]) message += " (" + std::string(detail) + ")";
  throw DeviceError(message);
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw DeviceError(std::string(call) + " failed: " + cublasGetStatusName(status) + " (" +
                    cublasGetStatusString(status) + ")");
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

const char* status_name(cudnnStatus_t status) { return cudnnGetErrorString(status); }

}  // namespace dnnx::cuda
