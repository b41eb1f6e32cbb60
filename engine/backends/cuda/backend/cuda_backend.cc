#include "backends/cuda/backend/cuda_backend.h"

#include <chrono>

#include "backends/cuda/dense/blas.h"
#include "backends/cuda/backend/cuda_kernels.h"
#include "backends/cuda/search/conv_algo.h"

#include <algorithm>

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
  set_stream_priority(context->stream, !options.background_priority);
  check(cudnnSetStream(context->cudnn, context->stream), "cudnnSetStream");
  check(cublasSetStream(context->cublas, context->stream), "cublasSetStream");
  check(cublasSetMathMode(context->cublas, blas_math_mode(options.precision)), "cublasSetMathMode");
  // cuBLAS gives the same bits run to run on one GPU model except in routines that use atomics,
  // which it does only when this mode allows them (deterministic training relies on it; see
  // docs/finetune.md). It is cuBLAS's default; set here so that nothing turns it on unnoticed.
  check(cublasSetAtomicsMode(context->cublas, CUBLAS_ATOMICS_NOT_ALLOWED), "cublasSetAtomicsMode");
  context->hooks = TestHooks::from_environment();
  context->memory = std::make_unique<MemoryBudget>(options.memory_limit);
  if (!options.plan_cache_path.empty()) {
    context->plan_cache = std::make_unique<PlanCache>(options.plan_cache_path, *context->stats);
  }
  return context;
}

}  // namespace

std::string unsupported_options(const DeviceOptions&) { return ""; }

namespace {

// The math of a layer in a precision="fp16" or "bf16" model (half storage of type `half`),
// where the kernel did not name one.
std::string half_model_math(DType half_type, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>& outputs, const std::string& why_fp32) {
  bool half = false;
  for (const ValueInfo& v : inputs) half = half || (v.present && v.info.dtype == half_type);
  for (const TensorInfo& t : outputs) half = half || t.dtype == half_type;
  const std::string name = half_storage_name(half_type);
  if (half) return name + " storage, fp32 arithmetic";
  return "fp32 (no " + name + " kernel: " + why_fp32 + ")";
}

}  // namespace

CudaBackend::CudaBackend(const DeviceOptions& options) {
  const std::string why = unsupported_options(options);
  if (!why.empty()) throw DeviceError(why);
  context_ = open_device(options);
  size_t free_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_memory_), "cudaMemGetInfo");
  if (options.workspace_limit == kAutoWorkspace) {
    context_->options.workspace_limit = auto_workspace_limit(options, total_memory_);
  }
  streams_ = std::make_unique<StreamJoiner>();
  arrays_ = std::make_unique<ArrayPool>(options.device, context_->stream, *streams_);
  register_cuda_kernels(kernels_, *context_);
}

CudaBackend::~CudaBackend() {
  if (context_) cudaSetDevice(context_->options.device);
}

std::string CudaBackend::unsupported_reason(const Node& node) const {
  const OpDef* def = op_registry().find(node);
  if (def && def->aliases_input0) return "";  // a view: no kernel needed
  const KernelEntry* entry = kernels_.entry(node);
  if (!entry) return "the CUDA backend has no kernel for " + node.op_type + " yet";
  return entry->refusal(node);  // what its registration refuses (LSTM clip, asymmetric NHWC pads, ...)
}

DType CudaBackend::half_storage() const { return precision_half_type(context_->options.precision); }

// tf32, fp16 and bf16 run on tensor cores, whose cuDNN kernels read NHWC (an NCHW conv pays for a layout
// conversion inside cuDNN); fp32 FMA convs are fastest NCHW (FFT and Winograd are NCHW-only), so
// an fp32 model keeps ONNX's layout.
bool CudaBackend::channels_last() const { return context_->options.precision != Precision::Fp32; }

// Note [narrow regions]; at fp16 and bf16 a region needs one conv of any width: with
// BatchNormalization and AveragePool channels-last too, a region of them alone (a BatchNormalization
// with no conv before it) would pay two conversions and gain nothing.
int64_t CudaBackend::channels_last_min_channels() const {
  return context_->options.precision == Precision::Tf32 ? 32 : 1;
}

// 16 bytes of channels: 8 half elements, 4 tf32 (float32) ones (Note [padded channels]).
int64_t CudaBackend::channels_last_channel_multiple() const {
  const Precision p = context_->options.precision;
  return p == Precision::Tf32 ? 4 : p == Precision::Fp16 || p == Precision::Bf16 ? 8 : 1;
}

// Note [channels-last forms] on CUDA: the regions also keep the squeeze-and-excitation gates,
// per-channel scales and the model's own NHWC Transposes (views), and a
// depthwise conv of 32+ channels makes its region wide at tf32 (the direct depthwise kernel reads
// NHWC as fast as NCHW: Note [direct depthwise conv]). Measured on an H100 at batch 64 (fp16,
// measure_precision=False, 2026-12-05, bench/probes/probe_cuda_slow_rows.py) before this:
// EfficientNet-B0 spent 2.16 of 8.47 ms in 32 Transposes around its SE gates, ConvNeXt-T 4.5 of
// 21.7 ms in 64 Transposes (its blocks' own permutes beside the conversions around its convs).
// Every value type the CUDA kernels take may stay channels-last (float32 and the half types).
// Channel concatenations (Concat and Split on channels, as the same op on axis 3) stay
// channels-last too, with BatchNormalization(+Relu) and AveragePool in NHWC beside them, so that
// DenseNet's, GoogLeNet's and SqueezeNet's regions are not cut at every block. They were kept
// in ONNX's layout before (session 6): DenseNet-121 with its Concats channels-last ran 30.3 ms at
// tf32 and 22.5 at fp16 (batch 64) against 22.3 and 16.1 without, when the NHWC Concat was a
// cudaMemcpy2DAsync of one short row per pixel and each BatchNormalization after it needed a
// Transpose back. Now (session 18, H100, batch 64): 8.71 ms at tf32 and 5.41 at fp16, against
// 12.44 and 8.65 in ONNX's layout; GoogLeNet 4.05 / 5.55 and 3.11 / 4.52, SqueezeNet 1.33 / 2.23
// and 1.01 / 1.78 (bench/RESULTS_CUDA.md), with the Concat one kernel that spreads short rows over
// its threads (Note [short concat rows]).
ChannelsLastForms CudaBackend::channels_last_forms() const {
  ChannelsLastForms forms;
  forms.graph_ops = true;
  forms.wide_depthwise = true;
  // DNNX_PROBE_CHANNEL_CONCAT=0: the layout before the channel-axis forms and the means over pixels, for probes
  forms.channel_concat = forms.pixel_means = context_->hooks.channel_concat;
  forms.int8_convs = int8_channels_last();  // Note [int8 nhwc on cuda]
  return forms;
}

// Note [int8 nhwc on cuda]: behind DNNX_PROBE_INT8_NHWC=1 (measured no faster yet: the Note says
// where); the int8 convs keep ONNX's layout otherwise.
bool CudaBackend::int8_channels_last() const { return context_->hooks.int8_nhwc; }

std::string CudaBackend::half_unsupported_reason(const Node& node) const {
  const OpDef* def = op_registry().find(node);
  if (def && def->aliases_input0) return "";  // a view: no kernel, any element type
  const KernelEntry* entry = kernels_.entry(node);
  const DType half = half_storage();
  if (!entry || !entry->stores(half)) {
    return std::string("the CUDA backend has no ") + dtype_name(half) + " kernel for " + node.op_type;
  }
  const std::string refused = entry->refusal(node);  // a host layer (Note [host fallback]): float32
  return refused.empty() ? "" : "runs on the host: " + refused;
}

namespace {

// The element types the CUDA kernels were written for: float32, int32, int64, bool, and the half
// storage types. A node with any other (int8, float64, the float8 types, ... of Note [dtypes] in
// ir/tensor.h) is refused here, so it runs on the host (Note [host fallback]): no kernel reads
// bytes of a type it does not know; unless its kernel entry lists that type (KernelEntry::dtypes:
// QuantizeLinear's and DequantizeLinear's 8- and 16-bit integers). (A model's own float64/float16
// values are float32 on a device: python/dnnx/_edges.py.)
bool device_type(DType t) {
  return t == DType::Float32 || t == DType::Int32 || t == DType::Int64 || t == DType::Bool || is_half(t);
}

void require_device_types(const Node& node, const KernelEntry* entry, const std::vector<ValueInfo>& inputs,
                          const std::vector<TensorInfo>& outputs) {
  auto check = [&node, entry](DType t) {
    if (!device_type(t) && !(entry && entry->stores(t))) {
      node_fail<UnsupportedModelError>(node, std::string("the CUDA backend has no ") + dtype_name(t) + " kernels");
    }
  };
  for (const ValueInfo& v : inputs) {
    if (v.present) check(v.info.dtype);
  }
  for (const TensorInfo& t : outputs) check(t.dtype);
}

}  // namespace

KernelChoice CudaBackend::plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                    const std::vector<TensorInfo>& outputs) const {
  const KernelFactory* factory = kernels_.find(node);
  if (!factory) node_fail<UnsupportedModelError>(node, unsupported_reason(node));
  require_device_types(node, kernels_.entry(node), inputs, outputs);
  std::lock_guard<std::recursive_mutex> lock(plan_mutex_);
  activate();
  const auto start = std::chrono::steady_clock::now();
  try {
    KernelChoice choice = (*factory)(node, inputs, outputs);
    // Where a plan's time goes (Model.planner_stats(): "plan_seconds: <op>"), searches included.
    context_->stats->count("plan_seconds: " + node.op_type,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    apply_run_hooks(context_->hooks, context_->stream, node, choice);
    const DType half = half_storage();
    if (is_half(half) && !node.fp32_reason.empty()) {  // Note [fp16 range]: its values leave fp16's range
      const std::string& math = choice.math;
      choice.math = (math.empty() ? "fp32" : math.rfind("fp32", 0) == 0 ? math : "fp32, " + math) + " (" +
                    node.fp32_reason + ")";
    } else if (is_half(half) && choice.math.empty()) {
      choice.math = half_model_math(half, inputs, outputs, half_unsupported_reason(node));
    } else if (is_half(half) && choice.math.rfind("fp32", 0) == 0) {
      // An fp32 kernel in a half model (an LSTM under bf16): the row reads as one that names no
      // math, "fp32 (no bf16 kernel: <why>)", then the kernel's own words ("(CUDNN_FMA_MATH)").
      const std::string why = half_unsupported_reason(node);
      if (!why.empty()) {
        choice.math = std::string("fp32 (no ") + half_storage_name(half) + " kernel: " + why + ")" + choice.math.substr(4);
      }
    }
    choice.kernel = in_nvtx_range(nvtx_, node, std::move(choice.kernel));
    return choice;
  } catch (const DeviceError& e) {
    node_fail<DeviceError>(node, e.what());
  }
}

StagedChoice CudaBackend::plan_staged_node(const Node& node, const std::vector<ValueInfo>& inputs) const {
  const KernelEntry* entry = kernels_.entry(node);
  StagedChoice none;
  if (!entry || !entry->staged) return Backend::plan_staged_node(node, inputs);
  none.host_reason = entry->refusal(node);
  if (!none.host_reason.empty()) return none;
  std::lock_guard<std::recursive_mutex> lock(plan_mutex_);
  activate();
  try {
    for (const ValueInfo& v : inputs) {
      if (v.present && !entry->stores(v.info.dtype) && !device_type(v.info.dtype)) {
        none.host_reason = std::string("the CUDA kernel takes no ") + dtype_name(v.info.dtype);
        return none;
      }
    }
    return entry->staged(node, inputs);
  } catch (const UnsupportedModelError& e) {
    none.host_reason = e.what();
    return none;
  }
}

KernelChoice CudaBackend::replan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                      const std::vector<TensorInfo>& outputs, const std::vector<std::string>& failed,
                                      size_t workspace_cap) const {
  std::lock_guard<std::recursive_mutex> lock(plan_mutex_);
  CudaContext& ctx = *context_;
  struct Restore {  // the options and the avoid list as they were, however planning ends
    CudaContext& ctx;
    size_t workspace_limit;
    ~Restore() {
      ctx.avoid.clear();
      ctx.options.workspace_limit = workspace_limit;
    }
  } restore{ctx, ctx.options.workspace_limit};
  const LayersPlanned layers_planned(*this);  // the search scratch goes after (Note [search scratch])
  ctx.avoid = failed;
  ctx.options.workspace_limit = std::min(workspace_cap, restore.workspace_limit);
  KernelChoice choice = plan_node(node, inputs, outputs);
  if (ctx.avoided(choice.candidate)) {  // it would be the failed kernel again
    throw UnsupportedModelError(node.where() + ": the CUDA backend has no other kernel for " + node.op_type);
  }
  return choice;
}

void CudaBackend::activate() const { check(cudaSetDevice(context_->options.device), "cudaSetDevice"); }

void* CudaBackend::allocate(size_t bytes) const {
  if (bytes == 0) return nullptr;
  activate();
  context_->memory->take(bytes, "allocating device memory");
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation && arrays_) {
    cudaGetLastError();
    arrays_->trim();  // memory the output pool keeps, given back; then once more
    status = cudaMalloc(&ptr, bytes);
  }
  if (status != cudaSuccess) context_->memory->give(bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw DeviceError("out of device memory on " + name() + ": " + std::to_string(bytes) +
                      " bytes requested, " + std::to_string(free_bytes) + " of " +
                      std::to_string(total_bytes) + " free");
  }
  check(status, "cudaMalloc");
  std::lock_guard<std::mutex> lock(held_mutex_);
  held_[ptr] = bytes;
  return ptr;
}

void CudaBackend::release(void* ptr) const noexcept {
  if (!ptr) return;
  cudaSetDevice(context_->options.device);
  cudaFree(ptr);  // waits for the device; a failure here has nowhere to go
  std::lock_guard<std::mutex> lock(held_mutex_);
  const auto it = held_.find(ptr);
  if (it == held_.end()) return;
  context_->memory->give(it->second);
  held_.erase(it);
}

size_t CudaBackend::total_memory() const {
  const size_t limit = context_->memory->limit();
  return limit ? std::min(limit, total_memory_) : total_memory_;
}

std::string CudaBackend::memory_name() const {
  const size_t limit = context_->memory->limit();
  return limit && limit < total_memory_ ? name() + " under memory_limit" : name();
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

void* CudaBackend::allocate_pinned(size_t bytes) const {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  check(cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable), "cudaHostAlloc");
  return ptr;
}

void CudaBackend::release_pinned(void* ptr) const noexcept {
  if (ptr) cudaFreeHost(ptr);
}

void CudaBackend::queue_copy_to_host(void* pinned, const void* src, size_t bytes) const {
  if (bytes == 0) return;
  check(cudaMemcpyAsync(pinned, src, bytes, cudaMemcpyDeviceToHost, context_->stream), "cudaMemcpyAsync (to host)");
}

void CudaBackend::queue_host_call(const std::function<void()>* work) const {
  auto call = [](void* w) { (*static_cast<const std::function<void()>*>(w))(); };
  check(cudaLaunchHostFunc(context_->stream, call, const_cast<std::function<void()>*>(work)), "cudaLaunchHostFunc");
}

PlannerReport CudaBackend::planner_report() const {
  PlannerReport report = context_->stats->take_report(context_->plan_cache ? context_->plan_cache->path() : "");
  report.counters["device_bytes"] = static_cast<double>(context_->memory->held());  // Note [memory limit]
  return report;
}

bool CudaBackend::capturing() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(context_->stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

void CudaBackend::set_priority(bool foreground) const { set_stream_priority(context_->stream, foreground); }

// Under the planning lock: another thread's plan_node may be searching on the scratch now.
void CudaBackend::layers_planned() const {
  std::lock_guard<std::recursive_mutex> lock(plan_mutex_);
  context_->search_scratch->release();
}

void CudaBackend::synchronize() const { check(cudaStreamSynchronize(context_->stream), "cudaStreamSynchronize"); }

}  // namespace dnnx::cuda
