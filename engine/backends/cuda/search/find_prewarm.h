// Note [find prewarm]: cudnnFind*AlgorithmEx is mostly host work, 55-60% of its samples in the
// execution plans' finalize (py-spy over ResNet-50's cold load at batch 256, an H100, session
// 13), one candidate after another. cuDNN 9 answers a workspace query by finalizing the same plan
// (Note [conv query memo]); where it keeps that plan for the process rather than the handle,
// queries made on other threads, each with a handle of its own, leave Find only the GPU's share.
// DNNX_PROBE_FIND_PREWARM=N (test_hooks.h) spreads each layer's queries over N threads before its
// Find; 0 (the default) makes none: whether cuDNN shares the plans across handles is measured by
// bench/probes/cudnn_find_prewarm first.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "backends/cuda/conv/conv_direction.h"
#include "backends/cuda/search/conv_algo.h"

namespace dnnx::cuda {

class FindPrewarm {
 public:
  FindPrewarm(int device, int threads) : device_(device), handles_(static_cast<size_t>(threads), nullptr) {}
  ~FindPrewarm();
  FindPrewarm(const FindPrewarm&) = delete;
  FindPrewarm& operator=(const FindPrewarm&) = delete;

  // Every algorithm's workspace query for `d` in `dir`, spread over the threads (thread i asks
  // algorithms i, i + N, ...); returns when all have answered. Errors are left to Find.
  void run(ConvDirection dir, const ConvDescriptors& d, int algo_count);

 private:
  int device_;
  std::mutex mutex_;
  std::vector<cudnnHandle_t> handles_;  // created by their threads at first use, on device_
};

// The context's prewarm where DNNX_PROBE_FIND_PREWARM asks for one (null otherwise), made once.
FindPrewarm* find_prewarm(const CudaContext& ctx);

}  // namespace dnnx::cuda
