// RoiAlign and MaxRoiPool on CUDA (roi_kernels.cu), float32: X, the rois and the output stay
// float32 at every precision (a box's corners in float16 would move by up to a quarter pixel
// past 256); the half_storage pass converts around them. Forward only. Where the CPU raises for
// a roi (a batch index outside X, a box past 2^30 samples), the device writes zeros (Note
// [device roi range]).
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/roi/roi_kernels.h"
#include "ops/roi/max_roi_pool.h"
#include "ops/roi/roi_align.h"

namespace dnnx::cuda {

namespace {

// X's dims and the roi count, for an output of `out_h` x `out_w` bins.
RoiDims roi_dims(const Node& node, const std::vector<ValueInfo>& inputs, int64_t out_h, int64_t out_w,
                 float spatial_scale) {
  require_cuda_float(node, inputs[0].info, "X");
  require_cuda_float(node, inputs[1].info, "rois");
  const Shape& x = inputs[0].info.shape;
  RoiDims d;
  d.batch = x[0];
  d.channels = x[1];
  d.height = x[2];
  d.width = x[3];
  d.rois = inputs[1].info.shape[0];
  d.out_h = out_h;
  d.out_w = out_w;
  d.spatial_scale = spatial_scale;
  return d;
}

KernelChoice with_range_note(KernelChoice choice, const char* what) {
  choice.rejected.push_back({"range check", what});
  return choice;
}

KernelChoice plan_roi_align(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  const RoiAlignAttrs attrs = roi_align_attrs(node);
  const RoiDims d = roi_dims(node, inputs, attrs.output_height, attrs.output_width, attrs.spatial_scale);
  const bool half_pixel = attrs.half_pixel, max_mode = attrs.mode == RoiAlignMode::Max;
  const int64_t sampling_ratio = attrs.sampling_ratio;
  const CudaContext* c = &ctx;
  return with_range_note(
      make_choice("bilinear samples", [=](const KernelArgs& a) {
        launch_roi_align(a.in<float>(0), a.in<float>(1), a.in<int64_t>(2), a.out<float>(0), d, half_pixel, max_mode,
                         sampling_ratio, c->stream);
      }),
      "a batch index outside X, or a box past 2^30 samples, gives zeros on CUDA (the CPU raises)");
}

KernelChoice plan_max_roi_pool(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                               const std::vector<TensorInfo>&) {
  const MaxRoiPoolAttrs attrs = max_roi_pool_attrs(node);
  const RoiDims d = roi_dims(node, inputs, attrs.pooled_height, attrs.pooled_width, attrs.spatial_scale);
  const CudaContext* c = &ctx;
  return with_range_note(make_choice("direct", [=](const KernelArgs& a) {
                           launch_max_roi_pool(a.in<float>(0), a.in<float>(1), a.out<float>(0), d, c->stream);
                         }),
                         "a batch index outside X gives zeros on CUDA (the CPU raises)");
}

}  // namespace

void register_cuda_roi_align_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("RoiAlign", bind(ctx, plan_roi_align)).with_dtypes({DType::Float32});
  r.add("MaxRoiPool", bind(ctx, plan_max_roi_pool)).with_dtypes({DType::Float32});
}

}  // namespace dnnx::cuda
