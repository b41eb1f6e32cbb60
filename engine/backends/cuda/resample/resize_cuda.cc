// Resize and Upsample on CUDA: nearest and linear, float32, forward (resize_kernels.cu) and
// gradient (a gather with no atomics, Note [separable adjoint] in train/separable_adjoint.cu).
// Cubic and antialias are refused at load (.refusing), so those nodes run on the CPU inside the
// CUDA plan (Note [host fallback] in runtime/host_fallback.h); they do not train on CUDA (the
// gradient factory refuses them by name). The parameters are ops/resample/resize.h's, read once
// at plan time; the forward's taps are computed on the device.
#include <memory>

#include "backends/cuda/backend/lambda_grad.h"
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/resample/resize_kernels.h"
#include "backends/cuda/train/separable_adjoint.h"
#include "ops/resample/resize.h"

namespace dnnx::cuda {

namespace {

std::string resize_refusal(const Node& node) {
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode == "cubic") return "no CUDA kernel for cubic Resize";
  if (node.attr_int("antialias", 0) != 0) return "no CUDA kernel for antialiased Resize";
  return "";
}

ResizeLaunch resize_launch(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  require_cuda_float(node, inputs[0].info, "X");
  if (x.size() > static_cast<size_t>(kMaxResizeDims)) {
    node_fail<UnsupportedModelError>(node, "X " + shape_str(x) + " has more than " + std::to_string(kMaxResizeDims) +
                                               " dims (the CUDA Resize kernel's limit)");
  }
  const ResizeParams p = resize_params(node, inputs, x);
  ResizeLaunch l;
  l.rank = static_cast<int>(x.size());
  l.mode = p.mode;
  l.coord = p.coord;
  l.nearest = p.nearest;
  l.extrapolation = p.extrapolation;
  const std::vector<int64_t> strides = packed_strides(x);
  for (int d = 0; d < l.rank; ++d) {
    l.dims[d] = p.dims[d];
    l.in_strides[d] = strides[d];
  }
  return l;
}

const char* algorithm(const ResizeLaunch& l) { return l.mode == ResizeMode::Nearest ? "nearest kernel" : "linear kernel"; }

KernelChoice plan_resize(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) {
  const ResizeLaunch l = resize_launch(node, inputs);
  const int64_t n = numel(outputs[0].shape);
  const CudaContext* c = &ctx;
  return make_choice(algorithm(l), [=](const KernelArgs& a) { launch_resize(l, a.in(0), a.out(0), n, c->stream); });
}

// The adjoint's lists (Note [separable adjoint]): per dim, for each index of X, the outputs along
// it that read that index with a nonzero weight, in output order, from the CPU's tap tables.
AdjointReaders resize_readers(const ResizeParams& p, const Shape& x) {
  const std::vector<ResizeTaps> taps = resize_taps(p);
  AdjointReaders readers(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    const ResizeTaps& t = taps[d];
    readers[d].resize(static_cast<size_t>(x[d]));
    for (int64_t o = 0; o < p.out[d]; ++o) {
      if (t.outside[o]) continue;  // tf_crop_and_resize's extrapolation: no X element read
      for (int64_t k = 0; k < t.taps; ++k) {
        const float w = t.weight[o * t.taps + k];
        if (w != 0.0f) readers[d][t.index[o * t.taps + k]].emplace_back(o, w);
      }
    }
  }
  return readers;
}

GradChoice plan_resize_grad(const GradRequest& r) {
  // A refused node runs on the host in inference; its gradient has no such path yet.
  const std::string refused = resize_refusal(r.node);
  if (!refused.empty()) node_fail<UnsupportedModelError>(r.node, "training through it on CUDA: " + refused);
  const ResizeLaunch l = resize_launch(r.node, r.inputs);  // its checks: float32 X, kMaxResizeDims dims at most
  const Shape& x = r.inputs[0].info.shape;
  const ResizeParams p = resize_params(r.node, r.inputs, x);
  const CudaContext* c = &cuda_context_of(r);
  auto lists = std::make_shared<SeparableAdjointLists>(*c, x, p.out, resize_readers(p, x));
  const int64_t x_size = numel(x);
  return make_grad_choice(std::string(algorithm(l)) + " (adjoint as a gather)", [=](const GradArgs& a) {
    if (a.d_inputs[0]) launch_separable_adjoint(lists->view(), a.d_outputs[0], a.d_inputs[0], x_size, c->stream);
  });
}

}  // namespace

void register_cuda_resize_kernels(KernelRegistry& r, const CudaContext& ctx) {
  for (const char* op : {"Resize", "Upsample"}) {
    r.add(op, bind(ctx, plan_resize)).refusing(resize_refusal).with_gradient(plan_resize_grad);
  }
}

}  // namespace dnnx::cuda
