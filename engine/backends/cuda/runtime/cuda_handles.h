// RAII owners for every CUDA, cuDNN and cuBLAS handle and descriptor the backend creates:
// each is created in its constructor (a failure is a DeviceError) and destroyed in its
// destructor, so no error path leaks one. Move-only.
#pragma once
#include <memory>
#include <utility>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/memory_budget.h"

namespace dnnx::cuda {

// Owns one handle of type T made by Create and released by Destroy.
template <class T, class Status, Status (*Create)(T*), Status (*Destroy)(T)>
class Owned {
 public:
  explicit Owned(const char* what) { check(Create(&handle_), what); }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, T{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, T{});
    }
    return *this;
  }
  ~Owned() { reset(); }

  T get() const { return handle_; }
  operator T() const { return handle_; }  // NOLINT: passes straight into the library calls

 private:
  void reset() noexcept {
    if (handle_) Destroy(handle_);
    handle_ = T{};
  }
  T handle_{};
};

// cuDNN descriptors and handles.
template <class T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class CudnnOwned : public Owned<T, cudnnStatus_t, Create, Destroy> {
 public:
  CudnnOwned() : Owned<T, cudnnStatus_t, Create, Destroy>("cudnnCreate (handle or descriptor)") {}
};

using CudnnHandle = CudnnOwned<cudnnHandle_t, cudnnCreate, cudnnDestroy>;
using TensorDescriptor = CudnnOwned<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                    cudnnDestroyTensorDescriptor>;
using FilterDescriptor = CudnnOwned<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                    cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor = CudnnOwned<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                         cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = CudnnOwned<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                     cudnnDestroyPoolingDescriptor>;
using ActivationDescriptor = CudnnOwned<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor,
                                        cudnnDestroyActivationDescriptor>;
using RnnDescriptor = CudnnOwned<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor = CudnnOwned<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor,
                                     cudnnDestroyRNNDataDescriptor>;
using DropoutDescriptor = CudnnOwned<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor,
                                     cudnnDestroyDropoutDescriptor>;

// The cuBLAS handle.
class CublasHandle : public Owned<cublasHandle_t, cublasStatus_t, cublasCreate, cublasDestroy> {
 public:
  CublasHandle() : Owned("cublasCreate") {}
};

// The cuBLASLt handle (Gemm with its bias / ReLU epilogues, gemm_cuda.cc).
class CublasLtHandle : public Owned<cublasLtHandle_t, cublasStatus_t, cublasLtCreate, cublasLtDestroy> {
 public:
  CublasLtHandle() : Owned("cublasLtCreate") {}
};

// A non-blocking stream: it never waits for work on the legacy default stream.
inline cudaError_t create_stream(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
}
class CudaStream : public Owned<cudaStream_t, cudaError_t, create_stream, cudaStreamDestroy> {
 public:
  CudaStream() : Owned("cudaStreamCreateWithFlags") {}
};

// Note [background search]: a model's stream runs at the device's highest priority, a background
// search's at its lowest: the block scheduler then starts a request's blocks before a search's
// waiting ones (it does not stop blocks already running). Applies to work queued from now on; a
// replayed graph takes the priority of the stream it is launched into.
inline void set_stream_priority(cudaStream_t stream, bool foreground) {
  int least = 0, greatest = 0;
  check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
  cudaLaunchAttributeValue value{};
  value.priority = foreground ? greatest : least;
  check(cudaStreamSetAttribute(stream, cudaLaunchAttributePriority, &value), "cudaStreamSetAttribute (priority)");
}

// Device memory the backend keeps for itself (the planner's search buffers, kernels' own
// buffers), freed on scope exit; its bytes go back to the model's budget (Note [memory limit]).
// Made by device_alloc (cuda_context.h) or try_plan_alloc (search/conv_candidates.h).
struct CudaFree {
  const MemoryBudget* budget = nullptr;
  size_t bytes = 0;
  void operator()(void* ptr) const noexcept {
    cudaFree(ptr);
    if (budget) budget->give(bytes);
  }
};
using DeviceMemory = std::unique_ptr<void, CudaFree>;

}  // namespace dnnx::cuda
