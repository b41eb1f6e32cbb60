#include "backends/cuda/search/find_prewarm.h"

#include <thread>

namespace dnnx::cuda {

FindPrewarm::~FindPrewarm() {
  for (cudnnHandle_t h : handles_) {
    if (h) cudnnDestroy(h);
  }
}

void FindPrewarm::run(ConvDirection dir, const ConvDescriptors& d, int algo_count) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const int threads = static_cast<int>(handles_.size());
  std::vector<std::thread> pool;
  for (int i = 0; i < threads && i < algo_count; ++i) {
    pool.emplace_back([this, i, threads, algo_count, dir, &d] {
      if (cudaSetDevice(device_) != cudaSuccess) return;
      cudnnHandle_t& h = handles_[static_cast<size_t>(i)];
      if (!h && cudnnCreate(&h) != CUDNN_STATUS_SUCCESS) {
        h = nullptr;
        return;
      }
      for (int algo = i; algo < algo_count; algo += threads) {
        size_t bytes = 0;
        switch (dir) {
          case ConvDirection::Forward:
            cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(algo),
                                                    &bytes);
            break;
          case ConvDirection::BackwardData:
            cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x,
                                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), &bytes);
            break;
          case ConvDirection::BackwardFilter:
            cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w,
                                                           static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), &bytes);
            break;
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
}

FindPrewarm* find_prewarm(const CudaContext& ctx) {
  if (ctx.hooks.find_prewarm <= 0) return nullptr;
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!ctx.find_prewarm) ctx.find_prewarm = std::make_shared<FindPrewarm>(ctx.options.device, ctx.hooks.find_prewarm);
  return ctx.find_prewarm.get();
}

}  // namespace dnnx::cuda
