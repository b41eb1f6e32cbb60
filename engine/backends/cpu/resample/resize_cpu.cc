// Resize and Upsample on the CPU, forward and gradient side by side, both walking the tap tables
// of ops/resample/resize.h (X [d...] -> Y [out...], float32):
//   forward   y[o]  = sum over the tap combinations of o of  prod_d w_d * x[i]
//             (extrapolation_value where a tf_crop_and_resize position falls outside X)
//   gradient  dx[i] = sum over the (o, combination) pairs that read i of  prod_d w_d * dy[o]
// One walk serves both, so the gradient is the forward's exact adjoint. Dims left unresized
// have one tap (weight 1), so Y costs prod over dims of the taps per element: 1 for nearest,
// 4 for a bilinear resize of [N, C, H, W], 16 for bicubic.
#include <algorithm>

#include "ops/resample/resize.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct ResizeWalk {
  Shape out;
  std::vector<int64_t> in_strides;  // X's packed strides
  std::vector<ResizeTaps> taps;     // one per dim
  float extrapolation = 0.0f;
};

ResizeWalk make_walk(const ResizeParams& p, const Shape& x) {
  ResizeWalk w;
  w.out = p.out;
  w.in_strides.assign(x.size(), 1);
  for (size_t d = x.size(); d-- > 1;) w.in_strides[d - 1] = w.in_strides[d] * x[d];
  w.taps = resize_taps(p);
  w.extrapolation = p.extrapolation;
  return w;
}

// Calls tap(o, i, weight) for every tap combination of every output o (in order), and
// outside(o) instead for an extrapolated o.
template <class Tap, class Outside>
void walk_taps(const ResizeWalk& w, Tap&& tap, Outside&& outside) {
  const size_t rank = w.out.size();
  const int64_t total = numel(w.out);
  std::vector<int64_t> at(rank, 0), k(rank, 0);
  for (int64_t o = 0; o < total; ++o) {
    bool out_of_x = false;
    for (size_t d = 0; d < rank; ++d) out_of_x = out_of_x || w.taps[d].outside[at[d]];
    if (out_of_x) {
      outside(o);
    } else {
      std::fill(k.begin(), k.end(), 0);
      while (true) {
        int64_t i = 0;
        float weight = 1.0f;
        for (size_t d = 0; d < rank; ++d) {
          const ResizeTaps& t = w.taps[d];
          const int64_t slot = at[d] * t.taps + k[d];
          i += t.index[slot] * w.in_strides[d];
          weight *= t.weight[slot];
        }
        tap(o, i, weight);
        size_t d = rank;
        while (d-- > 0 && ++k[d] == w.taps[d].taps) k[d] = 0;
        if (d == static_cast<size_t>(-1)) break;
      }
    }
    for (size_t d = rank; d-- > 0;) {  // next output position
      if (++at[d] < w.out[d]) break;
      at[d] = 0;
    }
  }
}

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(ResizeWalk w) : w_(std::move(w)) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    std::fill(y, y + numel(w_.out), 0.0f);
    walk_taps(
        w_, [&](int64_t o, int64_t i, float weight) { y[o] += weight * x[i]; },
        [&](int64_t o) { y[o] = w_.extrapolation; });
  }

 private:
  ResizeWalk w_;
};

class ResizeGradKernel final : public GradKernel {
 public:
  ResizeGradKernel(ResizeWalk w, int64_t x_size) : w_(std::move(w)), x_size_(x_size) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float* dy = args.d_outputs[0];
    std::fill(dx, dx + x_size_, 0.0f);
    walk_taps(
        w_, [&](int64_t o, int64_t i, float weight) { dx[i] += weight * dy[o]; }, [](int64_t) {});
  }

 private:
  ResizeWalk w_;
  int64_t x_size_;
};

std::string algorithm_name(const ResizeParams& p) {
  const char* mode = p.mode == ResizeMode::Nearest ? "nearest" : p.mode == ResizeMode::Linear ? "linear" : "cubic";
  return std::string(mode) + (p.antialias ? " antialias" : "") + " taps";
}

KernelChoice plan_resize(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const Shape& x = inputs[0].info.shape;
  const ResizeParams p = resize_params(node, inputs, x);
  KernelChoice choice;
  choice.algorithm = algorithm_name(p);
  choice.kernel = std::make_unique<ResizeKernel>(make_walk(p, x));
  return choice;
}

GradChoice plan_resize_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  const ResizeParams p = resize_params(r.node, r.inputs, x);
  GradChoice choice;
  choice.algorithm = algorithm_name(p) + " (adjoint)";
  choice.kernel = std::make_unique<ResizeGradKernel>(make_walk(p, x), numel(x));
  return choice;
}

}  // namespace

void register_cpu_resize_kernels(KernelRegistry& r) {
  r.add("Resize", plan_resize).with_gradient(plan_resize_grad);
  r.add("Upsample", plan_resize).with_gradient(plan_resize_grad);
}

}  // namespace dnnx
