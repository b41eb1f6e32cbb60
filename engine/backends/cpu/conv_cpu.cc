// Conv on the CPU, NCHW float32: per batch item and per group, Y_g = W_g x col, one sgemm each.
// col is X_g itself for a pointwise (1x1, stride 1, unpadded) conv ("gemm(1x1)"), otherwise
// X_g unrolled by im2col into the planner's workspace ("im2col+gemm"). The images are split
// across the CPU thread pool, each worker with its own col slice (Note [cpu threads] in
// thread_pool.cc); the plan says "x2 threads" when it does. Every spatial rank runs
// as 3-D, with unit dims prepended (ConvGeometry::expanded_to). "Conv+Relu" (made by the
// fuse_conv_relu pass) is the same kernel with the Relu applied after the bias, per output tile.
#include <algorithm>
#include <cstring>

#include "backends/cpu/activation_cpu.h"
#include "backends/cpu/blas.h"
#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/im2col_cpu.h"
#include "backends/cpu/thread_pool.h"

namespace dnnx {

namespace {

enum class ConvAlgo { Pointwise, Im2colGemm };
// The activation the kernel applies to Y_g after the bias, while Y_g is still in cache.
enum class ConvActivation { None, Relu };

class ConvKernel final : public Kernel {
 public:
  ConvKernel(ConvShape shape, ConvAlgo algo, bool has_bias, ConvActivation activation, int workers)
      : s_(std::move(shape)), algo_(algo), has_bias_(has_bias), activation_(activation), workers_(workers) {}

  // x [N, C, in...], w [M, C/group, k...], b [M], y [N, M, out...]; workspace holds one col
  // [Cg*K, OSP] per worker. The workers planned bound the slices, whatever the pool has now.
  void run(const KernelArgs& args) const override {
    float* cols = static_cast<float*>(args.workspace);
    const int64_t col_elems = algo_ == ConvAlgo::Im2colGemm ? s_.col_rows() * s_.g.output_size() : 0;
    cpu_thread_pool().parallel_for(s_.batch, [&](int64_t begin, int64_t end, int worker) {
      run_images(args, begin, end, cols + worker * col_elems);
    }, workers_);
  }

 private:
  // Images [begin, end), one at a time: its col stays in cache between im2col and the GEMM
  // (measured faster than unrolling several images into one wide GEMM, for LeNet's layers at
  // batch 256). Each image's GEMM is the call the 1-thread path makes, so results match it.
  void run_images(const KernelArgs& args, int64_t begin, int64_t end, float* col) const {
    const float* x = args.in(0);
    const float* w = args.in(1);
    float* y = args.out(0);
    const float* bias = has_bias_ ? args.in(2) : nullptr;
    const int64_t mg = s_.group_filters(), rows = s_.col_rows(), out_size = s_.g.output_size();
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        const float* x_g = x + (n * s_.channels + grp * s_.group_channels()) * s_.g.input_size();
        const float* cols = x_g;  // pointwise: X_g [Cg, H*W] is already the column matrix
        if (algo_ == ConvAlgo::Im2colGemm) {
          im2col(s_, x_g, col);
          cols = col;
        }
        // Y_g [Mg, OSP] = W_g [Mg, Cg*K] x cols [Cg*K, OSP], then + B_g (and Relu) while Y_g is in cache.
        float* y_g = y + (n * s_.filters + grp * mg) * out_size;
        sgemm(false, false, static_cast<int>(mg), static_cast<int>(out_size), static_cast<int>(rows),
              1.0f, w + grp * mg * rows, static_cast<int>(rows), cols, static_cast<int>(out_size),
              0.0f, y_g, static_cast<int>(out_size));
        if (bias) add_bias(bias + grp * mg, y_g);
        if (activation_ == ConvActivation::Relu) relu_inplace(y_g, mg * out_size);
      }
    }
  }

  // y_g [Mg, OSP] += b_g [Mg] per row.
  void add_bias(const float* b_g, float* y_g) const {
    const int64_t out_size = s_.g.output_size();
    for (int64_t m = 0; m < s_.group_filters(); ++m, y_g += out_size) {
      const float bm = b_g[m];
      for (int64_t i = 0; i < out_size; ++i) y_g[i] += bm;
    }
  }

  ConvShape s_;
  ConvAlgo algo_;
  bool has_bias_;
  ConvActivation activation_;
  int workers_;  // the most the images are split across
};

// Why a conv is not a plain GEMM over X (for the plan's rejected list).
std::string why_not_pointwise(const ConvGeometry& g) {
  if (g.kernel_size() != 1) return "kernel is " + g.kernel_str();
  if (g.has_padding()) return "padding " + shape_str(g.pads_begin) + " / " + shape_str(g.pads_end);
  return "strides are " + shape_str(g.strides);
}

KernelChoice plan_conv(const Node& node, const std::vector<ValueInfo>& inputs, ConvActivation activation) {
  const Shape& x = inputs[0].info.shape;
  const Shape& w = inputs[1].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Conv, Shape(x.begin() + 2, x.end()),
                                            Shape(w.begin() + 2, w.end()));
  ConvShape s{x[0], x[1], w[0], g.expanded_to(kConvKernelRank)};
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  // Split the batch (MACs per image) across the pool's threads as they are now (Note [cpu threads]).
  const int workers = plan_workers(s.batch, s.filters * s.col_rows() * s.g.output_size());
  KernelChoice choice;
  if (g.is_pointwise()) {
    choice.algorithm = with_threads("gemm(1x1)", workers);
    choice.rejected.push_back({"im2col+gemm", "not needed: 1x1 kernel, stride 1, no padding"});
    choice.kernel = std::make_unique<ConvKernel>(std::move(s), ConvAlgo::Pointwise, has_bias, activation, workers);
    return choice;
  }
  choice.algorithm = with_threads("im2col+gemm", workers);
  choice.rejected.push_back({"gemm(1x1)", why_not_pointwise(g)});
  // One col [Cg*K, OSP] (one group of one image) per worker.
  choice.workspace_bytes = static_cast<size_t>(workers * s.col_rows() * s.g.output_size()) * sizeof(float);
  choice.kernel = std::make_unique<ConvKernel>(std::move(s), ConvAlgo::Im2colGemm, has_bias, activation, workers);
  return choice;
}

KernelFactory conv_factory(ConvActivation activation) {
  return [activation](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_conv(node, inputs, activation);
  };
}

}  // namespace

void register_cpu_conv_kernels(KernelRegistry& r) {
  r.add("Conv", conv_factory(ConvActivation::None));
  r.add("Conv+Relu", conv_factory(ConvActivation::Relu));
}

}  // namespace dnnx
