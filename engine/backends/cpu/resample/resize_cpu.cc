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

// Note [planar resize]: the usual Resize scales only the last two dims (an image's H and W) and
// leaves the leading ones as they are: one tap of weight 1 reading its own index. Then each
// plane's output row (oh) is its rows' taps x each column's taps, read from tables, with no
// per-element walk over the dims: FCN-ResNet50's bilinear [1,21,28,28] -> [1,21,224,224]
// 28.5 -> 2.0 ms (1 thread, this project's Xeon). Each input row is resized along W once, and an
// output row is then a weighted sum of those rows (a vector loop): onnxruntime's order of sums.
bool planar(const ResizeWalk& w) {
  const size_t rank = w.out.size();
  if (rank < 2) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {
    const ResizeTaps& t = w.taps[d];
    if (t.taps != 1) return false;
    for (int64_t o = 0; o < w.out[d]; ++o) {
      if (t.index[o] != o || t.weight[o] != 1.0f || t.outside[o]) return false;
    }
  }
  return true;
}

// y [planes, OH, OW] from x [planes, H, W] (Note [planar resize]): per plane, every input row
// resized along W once into `rows` [H, OW], then each output row the weighted sum of its rows'.
void resize_planes(const ResizeWalk& w, int64_t h_n, const float* x, float* y, float* rows) {
  const size_t rank = w.out.size();
  const ResizeTaps& th = w.taps[rank - 2];
  const ResizeTaps& tw = w.taps[rank - 1];
  const int64_t oh_n = w.out[rank - 2], ow_n = w.out[rank - 1];
  const int64_t row = w.in_strides[rank - 2];                        // W
  const int64_t in_plane = rank >= 3 ? w.in_strides[rank - 3] : 0;  // H * W (one plane when rank 2)
  const int64_t planes = numel(w.out) / (oh_n * ow_n);
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x + p * in_plane;
    for (int64_t h = 0; h < h_n; ++h) {  // the rows the row taps read
      const float* xr = xp + h * row;
      float* r = rows + h * ow_n;
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        float sum = 0.0f;
        for (int64_t j = 0; j < tw.taps; ++j) sum += tw.weight[ow * tw.taps + j] * xr[tw.index[ow * tw.taps + j]];
        r[ow] = sum;
      }
    }
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      float* yr = y + (p * oh_n + oh) * ow_n;
      if (th.outside[oh]) {
        std::fill(yr, yr + ow_n, w.extrapolation);
        continue;
      }
      if (th.taps == 1 && th.weight[oh] == 1.0f) {  // nearest: a copy of its row (1 * r is r)
        std::copy(rows + th.index[oh] * ow_n, rows + (th.index[oh] + 1) * ow_n, yr);
      } else {
        std::fill(yr, yr + ow_n, 0.0f);
        for (int64_t k = 0; k < th.taps; ++k) {
          const float wh = th.weight[oh * th.taps + k];
          const float* r = rows + th.index[oh * th.taps + k] * ow_n;
          for (int64_t ow = 0; ow < ow_n; ++ow) yr[ow] += wh * r[ow];
        }
      }
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        if (tw.outside[ow]) yr[ow] = w.extrapolation;
      }
    }
  }
}

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(ResizeWalk w) : w_(std::move(w)), planar_(planar(w_)), rows_(planar_ ? input_rows(w_) : 0) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    float* y = args.out(0);
    if (planar_) {
      resize_planes(w_, rows_, x, y, static_cast<float*>(args.workspace));
      return;
    }
    std::fill(y, y + numel(w_.out), 0.0f);
    walk_taps(
        w_, [&](int64_t o, int64_t i, float weight) { y[o] += weight * x[i]; },
        [&](int64_t o) { y[o] = w_.extrapolation; });
  }
  bool is_planar() const { return planar_; }
  // The planar path's rows [rows_, OW] of one plane.
  size_t workspace_bytes() const { return planar_ ? static_cast<size_t>(rows_ * w_.out.back()) * sizeof(float) : 0; }

 private:
  // The input rows the row taps read (those the planar path resizes along W).
  static int64_t input_rows(const ResizeWalk& w) {
    const ResizeTaps& th = w.taps[w.out.size() - 2];
    return th.index.empty() ? 0 : 1 + *std::max_element(th.index.begin(), th.index.end());
  }

  ResizeWalk w_;
  bool planar_;
  int64_t rows_;  // input_rows(w_) on the planar path
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
  auto kernel = std::make_unique<ResizeKernel>(make_walk(p, x));
  choice.algorithm = algorithm_name(p) + (kernel->is_planar() ? " (planar)" : "");
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
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
