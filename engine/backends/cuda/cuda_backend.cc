#include "backends/cuda/cuda_backend.h"

#include "backends/cuda/cuda_kernels.h"

namespace dnnx::cuda {

namespace {

// Sets the device, then builds the context whose handles belong to it.
std::unique_ptr<CudaContext> open_device(const DeviceOptions& options) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (options.device < 0 || options.device >= count) {
    throw DeviceError("cuda:" + std::to_string(options.device) + " does not exist (" +
                      std::to_string(count) + " CUDA device(s) visible)");
  }
  check(cudaSetDevice(options.device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, options.device), "cudaGetDeviceProperties");
  auto context = std::make_unique<CudaContext>();
  context->options = options;
  context->device_name = prop.name;
  context->compute_capability = prop.major * 10 + prop.minor;
  check(cudnnSetStream(context->cudnn, context->stream), "cudnnSetStream");
  check(cublasSetStream(context->cublas, context->stream), "cublasSetStream");
  // fp32: plain FMA math; CUBLAS_DEFAULT_MATH never uses TF32 tensor cores.
  check(cublasSetMathMode(context->cublas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  return context;
}

}  // namespace

std::string unsupported_options(const DeviceOptions& options) {
  if (options.precision != Precision::Fp32) {
    return "precision other than fp32 is not implemented on CUDA yet (tf32 and fp16 are planned)";
  }
  return "";
}

CudaBackend::CudaBackend(const DeviceOptions& options) {
  const std::string why = unsupported_options(options);
  if (!why.empty()) throw DeviceError(why);
  context_ = open_device(options);
  register_cuda_kernels(kernels_, *context_);
}

CudaBackend::~CudaBackend() {
  if (context_) cudaSetDevice(context_->options.device);
}

std::string CudaBackend::unsupported_reason(const Node& node) const {
  const OpDef* def = op_registry().find(node.op_type);
  if (def && def->aliases_input0) return "";  // a view: no kernel needed
  return kernels_.find(node.op_type) ? "" : "the CUDA backend has no kernel for " + node.op_type + " yet";
}

KernelChoice CudaBackend::plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                    const std::vector<TensorInfo>& outputs) const {
  const KernelFactory* factory = kernels_.find(node.op_type);
  if (!factory) node_fail<UnsupportedModelError>(node, unsupported_reason(node));
  activate();
  try {
    return (*factory)(node, inputs, outputs);
  } catch (const DeviceError& e) {
    node_fail<DeviceError>(node, e.what());
  }
}

void CudaBackend::activate() const { check(cudaSetDevice(context_->options.device), "cudaSetDevice"); }

void* CudaBackend::allocate(size_t bytes) const {
  if (bytes == 0) return nullptr;
  activate();
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw DeviceError("out of device memory on " + name() + ": " + std::to_string(bytes) +
                      " bytes requested, " + std::to_string(free_bytes) + " of " +
                      std::to_string(total_bytes) + " free");
  }
  check(status, "cudaMalloc");
  return ptr;
}

void CudaBackend::release(void* ptr) const noexcept {
  if (!ptr) return;
  cudaSetDevice(context_->options.device);
  cudaFree(ptr);  // waits for the device; a failure here has nowhere to go
}

void CudaBackend::copy_to_device(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, context_->stream), "cudaMemcpyAsync (to device)");
}

void CudaBackend::copy_to_host(void* dst, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, context_->stream), "cudaMemcpyAsync (to host)");
  synchronize();
}

void CudaBackend::synchronize() const { check(cudaStreamSynchronize(context_->stream), "cudaStreamSynchronize"); }

}  // namespace dnnx::cuda
