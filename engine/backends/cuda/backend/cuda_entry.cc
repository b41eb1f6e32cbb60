// The C entry points of libdnnx_cuda.so (runtime/device_options.h describes them). Everything
// else in the library is hidden; no exception leaves these functions.
#include <dlfcn.h>

#include <cstdio>
#include <exception>
#include <string>

#include "backends/cuda/backend/cuda_backend.h"

namespace {

void write_message(const std::string& text, char* out, size_t out_len) {
  if (out && out_len > 0) std::snprintf(out, out_len, "%s", text.c_str());
}

// The CUDA runtime reports a missing driver as an insufficient one; this tells them apart.
bool driver_missing() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return true;
  dlclose(driver);
  return false;
}

// "cuDNN 9.14.0, cuBLAS 13.0.0" as loaded (not as compiled against).
std::string library_versions() {
  const size_t v = cudnnGetVersion();
  std::string text = "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                     std::to_string(v % 100);
  int blas = 0;
  if (cublasGetProperty(MAJOR_VERSION, &blas) == CUBLAS_STATUS_SUCCESS) {
    int minor = 0, patch = 0;
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    text += ", cuBLAS " + std::to_string(blas) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
  return text;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int dnnx_device_abi_version() { return dnnx::kDeviceAbiVersion; }

// The device count, with a description ("1 device: NVIDIA H200 (sm_90); cuDNN ..., cuBLAS ...")
// or the reason there is none in `message`.
__attribute__((visibility("default"))) int dnnx_device_probe(char* message, size_t message_len) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    write_message(std::string("no usable CUDA device: ") +
                      (driver_missing() ? "no NVIDIA driver (libcuda.so.1 cannot be loaded)"
                                        : std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")"),
                  message, message_len);
    return -1;
  }
  if (count == 0) {
    write_message("no CUDA device is visible", message, message_len);
    return -1;
  }
  cudaDeviceProp prop{};
  std::string first = "?";
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    first = std::string(prop.name) + " (sm_" + std::to_string(prop.major * 10 + prop.minor) + ")";
  }
  write_message(std::to_string(count) + " device(s), cuda:0 " + first + "; " + library_versions(), message,
                message_len);
  return count;
}

__attribute__((visibility("default"))) dnnx::Backend* dnnx_device_create_backend(
    const dnnx::DeviceOptions* options, char* error, size_t error_len) {
  try {
    return new dnnx::cuda::CudaBackend(*options);
  } catch (const std::exception& e) {
    write_message(e.what(), error, error_len);
  } catch (...) {
    write_message("unknown error while opening the CUDA backend", error, error_len);
  }
  return nullptr;
}

}  // extern "C"
