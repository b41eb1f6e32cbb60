#include "backends/cuda/backend/test_hooks.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/backend/fault_kernel.h"
#include "backends/cuda/search/plan_cache.h"

namespace dnnx::cuda {

TestHooks TestHooks::from_environment() {
  TestHooks hooks;
  if (const char* names = std::getenv("DNNX_TEST_FAIL_ALGO")) {
    std::stringstream list(names);
    std::string item;
    while (std::getline(list, item, ',')) {
      const size_t colon = item.find(':');
      const std::string name = item.substr(0, colon);
      const std::string how = colon == std::string::npos ? "" : item.substr(colon + 1);
      if (name.empty()) continue;
      if (how == "run") hooks.fail_at_run.insert(name);
      else hooks.fail_algo[name] = how == "oom" ? ForcedFailure::OutOfMemory : ForcedFailure::NotSupported;
    }
  }
  if (const char* bytes = std::getenv("DNNX_TEST_OOM_ABOVE")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(bytes, &end, 10);
    if (end != bytes) hooks.oom_above = static_cast<size_t>(n);
  }
  if (const char* node = std::getenv("DNNX_TEST_FAULT_NODE")) hooks.fault_node = node;
  if (const char* algo = std::getenv("DNNX_PROBE_RNN_ALGO")) {
    const std::string a = algo;
    hooks.rnn_algo = a == "persist_static"    ? CUDNN_RNN_ALGO_PERSIST_STATIC
                     : a == "persist_dynamic" ? CUDNN_RNN_ALGO_PERSIST_DYNAMIC
                                              : CUDNN_RNN_ALGO_STANDARD;
  }
  if (const char* all = std::getenv("DNNX_PROBE_RETIME_ALL")) hooks.retime_all = std::string(all) == "1";
  if (const char* reach = std::getenv("DNNX_PROBE_RETIME_REACH")) hooks.retime_reach = std::strtof(reach, nullptr);
  if (const char* on = std::getenv("DNNX_PROBE_INT8_NHWC")) hooks.int8_nhwc = std::string(on) == "1";
  if (const char* on = std::getenv("DNNX_PROBE_CHANNEL_CONCAT")) hooks.channel_concat = std::string(on) != "0";
  if (const char* on = std::getenv("DNNX_PROBE_CUDA_CONV_ACTIVATION")) hooks.conv_activation = std::string(on) == "1";
  if (const char* on = std::getenv("DNNX_PROBE_DIRECT_CONV_GRAD")) hooks.direct_conv_grad = std::string(on) != "0";
  if (const char* reach = std::getenv("DNNX_PROBE_RETIME_SMALL_REACH")) {
    hooks.retime_small_reach = std::strtof(reach, nullptr);
  }
  return hooks;
}

namespace {

// Fails each time it runs, as a cuDNN call failing at run time would (DNNX_TEST_FAIL_ALGO=NAME:run).
class FailingKernel final : public Kernel {
 public:
  explicit FailingKernel(std::string candidate) : candidate_(std::move(candidate)) {}
  void run(const KernelArgs&) const override {
    throw DeviceError(candidate_ + " failed: CUDNN_STATUS_EXECUTION_FAILED (a run-time failure forced by "
                      "DNNX_TEST_FAIL_ALGO)");
  }

 private:
  std::string candidate_;
};

// Launches a kernel that writes to an illegal address, then runs the real one (DNNX_TEST_FAULT_NODE).
class FaultingKernel final : public Kernel {
 public:
  FaultingKernel(cudaStream_t stream, std::unique_ptr<Kernel> inner) : stream_(stream), inner_(std::move(inner)) {}
  void run(const KernelArgs& args) const override {
    launch_illegal_write(stream_);
    check_launch("the faulting kernel (DNNX_TEST_FAULT_NODE)");
    inner_->run(args);
  }

 private:
  cudaStream_t stream_;
  std::unique_ptr<Kernel> inner_;
};

}  // namespace

void apply_run_hooks(const TestHooks& hooks, cudaStream_t stream, const Node& node, KernelChoice& choice) {
  if (!choice.kernel) return;
  if (!choice.candidate.empty() && hooks.fail_at_run.count(choice.candidate)) {
    choice.kernel = std::make_unique<FailingKernel>(choice.candidate);
  }
  if (!hooks.fault_node.empty() && node.name == hooks.fault_node) {
    choice.kernel = std::make_unique<FaultingKernel>(stream, std::move(choice.kernel));
  }
}

}  // namespace dnnx::cuda

extern "C" {

__attribute__((visibility("default"))) int dnnx_test_plan_cache_store(const char* path, const char* key, int algo,
                                                                       char* message, size_t message_len) {
  std::string warnings;
  try {
    dnnx::cuda::PlannerStats stats;
    dnnx::cuda::PlanCache cache(path, stats);
    dnnx::cuda::PlanRecord record;
    record.algo = algo;
    record.algorithm = "test algorithm " + std::to_string(algo);
    record.time_ms = 0.5;
    cache.store(key, record);
    for (const std::string& w : stats.take_report(path).warnings) warnings += w + "\n";
  } catch (const std::exception& e) {
    warnings += e.what();
  }
  if (message && message_len) std::snprintf(message, message_len, "%s", warnings.c_str());
  return warnings.empty() ? 0 : -1;
}

__attribute__((visibility("default"))) int dnnx_test_plan_cache_find(const char* path, const char* key) {
  try {
    dnnx::cuda::PlannerStats stats;
    const dnnx::cuda::PlanCache cache(path, stats);
    const auto record = cache.find(key);
    return record ? record->algo : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // extern "C"
