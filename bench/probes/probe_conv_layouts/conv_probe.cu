// Legacy cuDNN API conv timing: NCHW vs NHWC, fp32 (FMA) / tf32 / fp16, plain conv and fused bias+relu.
#include <cuda_fp16.h>
// Usage: conv_probe N C H W K R stride pad   (prints one line per precision x layout)
#include <cudnn.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#define CK(x) do { auto s_ = (x); if (s_ != CUDNN_STATUS_SUCCESS) { printf("ERR %s: %s\n", #x, cudnnGetErrorString(s_)); return -1.0f; } } while (0)
__global__ void fill(unsigned short* p, size_t n, bool half) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) >> 20;  // 0..4095
    float v = (h / 4096.0f - 0.5f) * 0.2f;
    if (half) p[i] = __half_as_ushort(__float2half(v)); else ((float*)p)[i] = v;
  }
}

static cudnnHandle_t H;
static void* ws; static size_t wsb = size_t(2) << 30;
float run(int n, int c, int h, int w, int k, int r, int st, int pd, int prec, bool nhwc, bool fused, int* algo_out) {
  cudnnDataType_t dt = prec == 2 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  size_t es = prec == 2 ? 2 : 4;
  int oh = (h + 2 * pd - r) / st + 1, ow = (w + 2 * pd - r) / st + 1;
  cudnnTensorFormat_t f = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  cudnnTensorDescriptor_t x, y, b; cudnnFilterDescriptor_t wd; cudnnConvolutionDescriptor_t cd; cudnnActivationDescriptor_t ad;
  cudnnCreateTensorDescriptor(&x); cudnnCreateTensorDescriptor(&y); cudnnCreateTensorDescriptor(&b);
  cudnnCreateFilterDescriptor(&wd); cudnnCreateConvolutionDescriptor(&cd); cudnnCreateActivationDescriptor(&ad);
  CK(cudnnSetTensor4dDescriptor(x, f, dt, n, c, h, w));
  CK(cudnnSetTensor4dDescriptor(y, f, dt, n, k, oh, ow));
  CK(cudnnSetTensor4dDescriptor(b, f, dt, 1, k, 1, 1));
  CK(cudnnSetFilter4dDescriptor(wd, dt, f, k, c, r, r));
  CK(cudnnSetConvolution2dDescriptor(cd, pd, pd, st, st, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CK(cudnnSetConvolutionMathType(cd, prec == 0 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  CK(cudnnSetActivationDescriptor(ad, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0));
  size_t xn = (size_t)n * c * h * w, yn = (size_t)n * k * oh * ow, wn = (size_t)k * c * r * r;
  void *xp, *yp, *wp, *bp;
  cudaMalloc(&xp, xn * es); cudaMalloc(&yp, yn * es); cudaMalloc(&wp, wn * es); cudaMalloc(&bp, k * es);
  fill<<<1024, 256>>>((unsigned short*)xp, xn, prec == 2); fill<<<1024, 256>>>((unsigned short*)wp, wn, prec == 2);
  fill<<<1024, 256>>>((unsigned short*)bp, k, prec == 2);
  cudnnConvolutionFwdAlgoPerf_t perf[10]; int got = 0;
  CK(cudnnFindConvolutionForwardAlgorithmEx(H, x, xp, wd, wp, cd, y, yp, 10, &got, perf, ws, wsb));
  float best = 1e9; int best_algo = -1;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  float one = 1, zero = 0;
  for (int i = 0; i < got && i < 4; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > wsb) continue;
    if (!(prec == 0 ? perf[i].mathType == CUDNN_FMA_MATH || perf[i].mathType == CUDNN_DEFAULT_MATH : true)) continue;
    CK(cudnnSetConvolutionMathType(cd, perf[i].mathType));
    auto call = [&]() {
      if (fused) return cudnnConvolutionBiasActivationForward(H, &one, x, xp, wd, wp, cd, perf[i].algo, ws, perf[i].memory, &zero, y, yp, b, bp, ad, y, yp);
      return cudnnConvolutionForward(H, &one, x, xp, wd, wp, cd, perf[i].algo, ws, perf[i].memory, &zero, y, yp);
    };
    if (call() != CUDNN_STATUS_SUCCESS) continue;
    for (int j = 0; j < 3; ++j) call();
    cudaEventRecord(e0);
    for (int j = 0; j < 20; ++j) call();
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= 20;
    if (ms < best) { best = ms; best_algo = perf[i].algo; }
  }
  *algo_out = best_algo;
  cudaFree(xp); cudaFree(yp); cudaFree(wp); cudaFree(bp);
  cudnnDestroyTensorDescriptor(x); cudnnDestroyTensorDescriptor(y); cudnnDestroyTensorDescriptor(b);
  cudnnDestroyFilterDescriptor(wd); cudnnDestroyConvolutionDescriptor(cd); cudnnDestroyActivationDescriptor(ad);
  return best;
}
int main(int argc, char** argv) {
  cudnnCreate(&H); cudaMalloc(&ws, wsb);
  int a[8]; for (int i = 0; i < 8; ++i) a[i] = atoi(argv[i + 1]);
  const char* pn[] = {"fp32", "tf32", "fp16"};
  for (int prec = 0; prec < 3; ++prec)
    for (int nhwc = 0; nhwc < 2; ++nhwc)
      for (int fused = 0; fused < 2; ++fused) {
        int algo;
        float ms = run(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], prec, nhwc, fused, &algo);
        printf("LEGACY %s %s %s %.4f algo=%d\n", pn[prec], nhwc ? "NHWC" : "NCHW", fused ? "fused" : "conv", ms, algo);
      }
  return 0;
}
