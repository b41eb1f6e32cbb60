// Does cuDNN 9 keep the execution plans its legacy queries finalize across handles, so that a
// cold cudnnFindConvolutionForwardAlgorithmEx can be prepared by other threads? One mode per
// process (every cache cold at the start), over ResNet-50's forward conv shapes at batch 256, fp32:
//   find      Find on the main handle, shape after shape (what dnnx's "auto" load does)
//   same      every algorithm's workspace query on the main handle first, then Find
//   threads   the workspace queries spread over 8 threads, each with a handle of its own, then
//             Find on the main handle
// Prints the host seconds of each part and Find's chosen algorithm per shape (the choices must
// not change). Build and run: bench/probes/cudnn_find_prewarm/run.sh
#include <cuda_runtime.h>
#include <cudnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CK(x) do { auto s_ = (x); if (s_ != 0) { std::fprintf(stderr, "%s: %d (line %d)\n", #x, (int)s_, __LINE__); std::exit(1); } } while (0)

struct Shape { int n, c, h, w, k, r, stride, pad; };

// ResNet-50 (torchvision v1.5) forward convs at batch 256, one of each shape.
const std::vector<Shape> kShapes = {
    {256, 3, 224, 224, 64, 7, 2, 3},
    {256, 64, 56, 56, 64, 1, 1, 0},   {256, 64, 56, 56, 64, 3, 1, 1},   {256, 64, 56, 56, 256, 1, 1, 0},
    {256, 256, 56, 56, 64, 1, 1, 0},  {256, 256, 56, 56, 128, 1, 1, 0}, {256, 128, 56, 56, 128, 3, 2, 1},
    {256, 128, 28, 28, 512, 1, 1, 0}, {256, 256, 56, 56, 512, 1, 2, 0}, {256, 512, 28, 28, 128, 1, 1, 0},
    {256, 128, 28, 28, 128, 3, 1, 1}, {256, 512, 28, 28, 256, 1, 1, 0}, {256, 256, 28, 28, 256, 3, 2, 1},
    {256, 256, 14, 14, 1024, 1, 1, 0}, {256, 512, 28, 28, 1024, 1, 2, 0}, {256, 1024, 14, 14, 256, 1, 1, 0},
    {256, 256, 14, 14, 256, 3, 1, 1}, {256, 1024, 14, 14, 512, 1, 1, 0}, {256, 512, 14, 14, 512, 3, 2, 1},
    {256, 512, 7, 7, 2048, 1, 1, 0},  {256, 1024, 14, 14, 2048, 1, 2, 0}, {256, 2048, 7, 7, 512, 1, 1, 0},
    {256, 512, 7, 7, 512, 3, 1, 1},
};

struct Desc {
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  size_t xb, wb, yb;
};

Desc make(const Shape& s) {
  Desc d;
  CK(cudnnCreateTensorDescriptor(&d.x));
  CK(cudnnCreateTensorDescriptor(&d.y));
  CK(cudnnCreateFilterDescriptor(&d.w));
  CK(cudnnCreateConvolutionDescriptor(&d.conv));
  CK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, s.n, s.c, s.h, s.w));
  CK(cudnnSetFilter4dDescriptor(d.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, s.k, s.c, s.r, s.r));
  CK(cudnnSetConvolution2dDescriptor(d.conv, s.pad, s.pad, s.stride, s.stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                     CUDNN_DATA_FLOAT));
  CK(cudnnSetConvolutionMathType(d.conv, CUDNN_FMA_MATH));
  int n, c, h, w;
  CK(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &n, &c, &h, &w));
  CK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
  d.xb = 4ull * s.n * s.c * s.h * s.w;
  d.wb = 4ull * s.k * s.c * s.r * s.r;
  d.yb = 4ull * n * c * h * w;
  return d;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void queries(cudnnHandle_t h, const Desc& d, int first, int step) {
  for (int a = first; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; a += step) {
    size_t bytes = 0;
    cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, static_cast<cudnnConvolutionFwdAlgo_t>(a), &bytes);
  }
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "find";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
  const double t0 = now();
  CK(cudaFree(nullptr));
  cudnnHandle_t main_handle;
  CK(cudnnCreate(&main_handle));
  std::vector<cudnnHandle_t> helpers(threads);
  if (mode == "threads") for (auto& h : helpers) CK(cudnnCreate(&h));
  const double t_start = now();
  size_t ws_bytes = 4ull << 30, max_x = 0, max_w = 0, max_y = 0;
  std::vector<Desc> descs;
  for (const Shape& s : kShapes) {
    descs.push_back(make(s));
    max_x = std::max(max_x, descs.back().xb), max_w = std::max(max_w, descs.back().wb), max_y = std::max(max_y, descs.back().yb);
  }
  void *x, *w, *y, *ws;
  CK(cudaMalloc(&x, max_x)); CK(cudaMalloc(&w, max_w)); CK(cudaMalloc(&y, max_y)); CK(cudaMalloc(&ws, ws_bytes));
  CK(cudaMemset(x, 1, max_x)); CK(cudaMemset(w, 1, max_w));
  CK(cudaDeviceSynchronize());
  double prep = 0, find = 0;
  std::string chosen;
  for (const Desc& d : descs) {
    double t = now();
    if (mode == "same") queries(main_handle, d, 0, 1);
    if (mode == "threads") {
      std::vector<std::thread> pool;
      for (int i = 0; i < threads; ++i) pool.emplace_back([&, i] { queries(helpers[i], d, i, threads); });
      for (auto& p : pool) p.join();
    }
    prep += now() - t;
    t = now();
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CK(cudnnFindConvolutionForwardAlgorithmEx(main_handle, d.x, x, d.w, w, d.conv, d.y, y,
                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, ws, ws_bytes));
    find += now() - t;
    chosen += std::to_string(static_cast<int>(perf[0].algo)) + " ";
  }
  std::printf("mode %-8s threads %d: handles %.3f s, prepare %.3f s, find %.3f s, prepare+find %.3f s; chosen %s\n",
              mode.c_str(), threads, t_start - t0, prep, find, prep + find, chosen.c_str());
  return 0;
}
