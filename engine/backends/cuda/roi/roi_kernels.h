// Launchers of the region-of-interest kernels (roi_kernels.cu): RoiAlign and MaxRoiPool on CUDA,
// float32. Each queues on `stream` and checks the launch (DeviceError on failure); no rois
// launches nothing.
//
// Note [device roi range]: the CPU kernels raise an InputError for a roi whose batch index is
// outside X, and RoiAlign for a box that needs more than 2^30 samples (Note [roi align]); a
// kernel cannot report either without a host read that would stall the stream and break CUDA
// graphs. So on CUDA such a roi's output is zeros (as Note [device index range] does for the
// gathers), and each plan row says so ("range check" in its rejected list).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

// X [batch, channels, height, width] and the pooled output's [rois, channels, out_h, out_w].
struct RoiDims {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t rois = 0, out_h = 1, out_w = 1;
  float spatial_scale = 1.0f;
};

// RoiAlign (ops/roi/roi_align.h, Note [roi align]): y [R, C, OH, OW] from x, rois [R, 4] (x1, y1,
// x2, y2) and batch_indices [R] (int64). half_pixel, max_mode and sampling_ratio as the
// attributes say.
void launch_roi_align(const float* x, const float* rois, const int64_t* batch, float* y, const RoiDims& d,
                      bool half_pixel, bool max_mode, int64_t sampling_ratio, cudaStream_t stream);

// MaxRoiPool (ops/roi/max_roi_pool.h): y [R, C, PH, PW] from x and rois [R, 5] (batch, x1, y1,
// x2, y2).
void launch_max_roi_pool(const float* x, const float* rois, float* y, const RoiDims& d, cudaStream_t stream);

}  // namespace dnnx::cuda
