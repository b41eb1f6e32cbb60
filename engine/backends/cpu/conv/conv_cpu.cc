// Conv on the CPU, NCHW float32: per batch item and per group, Y_g = W_g x col, one sgemm each.
// col is X_g itself for a pointwise (1x1, stride 1, unpadded) conv ("gemm(1x1)"), X_g gathered
// at the strides for a 1x1 unpadded strided conv of one group ("gather+gemm(1x1)": ResNet's
// downsample projections), otherwise X_g unrolled by im2col ("im2col+gemm"); the last two into
// the planner's workspace. A small unpadded, unstrided conv is computed from X_g directly
// instead ("direct", Note [direct conv] in conv_direct_cpu.cc: LeNet's layers), a depthwise one
// (one channel per group) by its own kernel ("direct depthwise 3x3", Note [direct depthwise
// conv] in conv_depthwise_cpu.cc: MobileNet's and EfficientNet's layers). The images
// (and, for fewer images than threads, the direct conv's filter panels) are split across the
// CPU thread pool, each worker with its own col slice (Note [cpu threads] in thread_pool.cc);
// a conv that would take im2col+gemm runs on the packed channels-last tiles instead where they
// apply (Note [nchw convs on the tiles] in conv_nchw_tiles_cpu.cc: "nchw->nhwc packed gemm ...");
// the plan says "x2 threads" when it does. Every spatial rank runs as 3-D, with unit dims prepended (ConvGeometry::expanded_to).
// "Conv+Relu" (the fuse_conv_relu pass) and "Conv+Add+Relu" (fuse_conv_add_relu: z is input 3)
// are the same kernel with more epilogue (conv_epilogue_cpu.h), applied per output tile;
// "Conv+Clip", "Conv+HardSwish" and "Conv+Swish" (fuse_conv_activation) apply their activation
// after it, per tile or row (Note [conv activation epilogue] in conv_activation_cpu.cc).
#include <algorithm>
#include <cstring>
#include <memory>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/conv/conv_activation_cpu.h"
#include "backends/cpu/conv/conv_depthwise_cpu.h"
#include "backends/cpu/conv/conv_direct_cpu.h"
#include "backends/cpu/conv/conv_epilogue_cpu.h"
#include "backends/cpu/conv/conv_nchw_tiles_cpu.h"
#include "backends/cpu/conv/conv_winograd_cpu.h"
#include "runtime/kernel_registry.h"
#include "backends/cpu/conv/im2col_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"

namespace dnnx {

namespace {

enum class ConvAlgo { Pointwise, GatherPointwise, Im2colGemm, Direct };
// What the kernel fuses after the GEMM, while Y_g is still in cache: nothing ("Conv"), a Relu
// ("Conv+Relu"), or the residual Add and a Relu ("Conv+Add+Relu").
enum class ConvFusion { None, Relu, AddRelu };

constexpr size_t kResidualInput = 3;  // Conv+Add+Relu's z

// An image-group's GEMM is cut into at most this many blocks (sgemm's limit is 64): every block
// is one OpenBLAS call that packs the operand the blocks share again (W for column blocks, col
// for row blocks), and packing was 17% of ResNet-50's time at batch 1 (perf: sgemm_oncopy and
// sgemm_itcopy). 64 -> 8 blocks: ResNet-50 batch 1, 1 thread, 127.5 -> 119.7 ms (medians of 10
// interleaved rounds in one process; onnxruntime 95.6). Still a shape-only split (Note
// [thread-independent gemm blocks]), with blocks enough for the pool on this 2-core machine.
constexpr int kConvGemmBlocks = 8;
// Note [padded direct conv]: the padded copy is measured against im2col+gemm on LeNet-5-sized
// layers (6 and 16 filters), where sgemm's few rows are what loses; with many filters im2col's
// copies are a small part of a GEMM that OpenBLAS runs well, and the direct conv is not measured there.
// Note [direct conv chunks]: a batch-1 direct conv split by filter panels across threads, each
// chunk with its own padded copy of the image, was slower on 2 threads than on 1 below ~400K
// multiply-adds a chunk (this 2-core EPYC, Model.profile medians of 200): mnist-8's 1 -> 8 5x5 at
// 28x28 (157K in all) 7.6 -> 11 us, its 8 -> 16 at 14x14 (627K) 20 -> 21-25 us; the CIFAR
// classifier's 3 -> 32 3x3 at 32x32 (884K) gained, 37 -> 22-32 us. So a chunk takes at least
// kMinChunkMacs.
constexpr int64_t kMinChunkMacs = int64_t{400} << 10;
constexpr int64_t kPaddedDirectMaxFilters = 32;

// Note [im2col across the pool]
// At batch 1 the images give the pool nothing to split, and an image's im2col ran on one thread
// while its sgemm (called outside any job) split across the pool: speech_gru's first conv (1
// channel, 11x11, stride 2, 40x50 outputs: col [121, 2000], 1 MB) took 0.16 ms at 1 thread and
// at 2. There the col's rows (one tap each, a plain copy) are split across the pool first
// (plan_workers over the rows, by the floats copied), then the sgemm splits as before. A copy is
// the same values on any thread, so the product's bits do not change.

class ConvKernel final : public Kernel {
 public:
  // im2col_workers: the threads one image's im2col splits across (Note [im2col across the pool]).
  ConvKernel(ConvShape shape, ConvAlgo algo, bool has_bias, ConvFusion fusion, ConvActivation act, int workers,
             int im2col_workers = 1)
      : s_(std::move(shape)), algo_(algo), has_bias_(has_bias), fusion_(fusion), act_(act), workers_(workers),
        im2col_workers_(im2col_workers) {}

  // The direct conv, its filter panels split into `chunks` per image (items: batch * chunks).
  ConvKernel(ConvShape shape, bool has_bias, ConvFusion fusion, ConvActivation act, int workers, int64_t chunks)
      : s_(std::move(shape)), algo_(ConvAlgo::Direct), has_bias_(has_bias), fusion_(fusion), act_(act), workers_(workers),
        direct_(std::make_unique<TapGemm>(direct_conv_gemm(s_))), chunks_(chunks) {}

  // x [N, C, in...], w [M, C/group, k...], b [M], z and y [N, M, out...]; workspace holds one
  // col [Cg*K, OSP] per worker (none for the direct conv). The workers planned bound the
  // slices, whatever the pool has now.
  void run(const KernelArgs& args) const override {
    if (algo_ == ConvAlgo::Direct) {  // a padded one: a padded image-group per worker (Note [padded direct conv])
      const int64_t padded = direct_padded_floats(s_);
      cpu_thread_pool().parallel_for(s_.batch * chunks_, [&](int64_t begin, int64_t end, int worker) {
        float* copy = padded ? static_cast<float*>(args.workspace) + worker * padded : nullptr;
        for (int64_t item = begin; item < end; ++item) run_direct(args, item / chunks_, item % chunks_, copy);
      }, workers_);
      return;
    }
    float* cols = static_cast<float*>(args.workspace);
    const int64_t col_elems = algo_ == ConvAlgo::Pointwise ? 0 : s_.col_rows() * s_.g.output_size();
    cpu_thread_pool().parallel_for(s_.batch, [&](int64_t begin, int64_t end, int worker) {
      run_images(args, begin, end, cols + worker * col_elems);
    }, workers_);
  }

 private:
  // Chunk `chunk` of image n's filter panels, every group.
  void run_direct(const KernelArgs& args, int64_t n, int64_t chunk, float* padded_copy) const {
    const int64_t panels = direct_->panels();
    const int64_t first = chunk * panels / chunks_, last = (chunk + 1) * panels / chunks_;
    const int64_t mg = s_.group_filters(), out_size = s_.g.output_size();
    const float* bias = has_bias_ ? args.in(2) : nullptr;
    const float* z = fusion_ == ConvFusion::AddRelu ? args.in(kResidualInput) : nullptr;
    for (int64_t grp = 0; grp < s_.g.group; ++grp) {
      const float* x_g = args.in(0) + (n * s_.channels + grp * s_.group_channels()) * s_.g.input_size();
      if (padded_copy) {
        pad_direct_input(s_, x_g, padded_copy);
        x_g = padded_copy;
      }
      const int64_t y_offset = (n * s_.filters + grp * mg) * out_size;
      ConvEpilogue epilogue;
      epilogue.bias = bias ? bias + grp * mg : nullptr;
      epilogue.residual = z ? z + y_offset : nullptr;
      epilogue.relu = fusion_ != ConvFusion::None;
      direct_->run(args.in(1) + grp * mg * s_.col_rows(), x_g, epilogue, args.out(0) + y_offset, out_size, out_size,
                   first, last);
      // The fused activation over the rows of these panels (Note [conv activation epilogue]).
      const int64_t panel_rows = TapGemm::panel_rows(mg);
      const int64_t row_begin = std::min(mg, first * panel_rows), row_end = std::min(mg, last * panel_rows);
      apply_conv_activation(act_, args.out(0) + y_offset + row_begin * out_size, (row_end - row_begin) * out_size);
    }
  }

  // Images [begin, end), one at a time: its col stays in cache between im2col and the GEMM
  // (measured faster than unrolling several images into one wide GEMM, for LeNet's layers at
  // batch 256). Each image's GEMM is the call the 1-thread path makes, so results match it.
  void run_images(const KernelArgs& args, int64_t begin, int64_t end, float* col) const {
    const float* x = args.in(0);
    const float* w = args.in(1);
    float* y = args.out(0);
    const float* bias = has_bias_ ? args.in(2) : nullptr;
    const float* z = fusion_ == ConvFusion::AddRelu ? args.in(kResidualInput) : nullptr;
    const int64_t mg = s_.group_filters(), rows = s_.col_rows(), out_size = s_.g.output_size();
    for (int64_t n = begin; n < end; ++n) {
      for (int64_t grp = 0; grp < s_.g.group; ++grp) {
        const float* x_g = x + (n * s_.channels + grp * s_.group_channels()) * s_.g.input_size();
        const float* cols = x_g;  // pointwise: X_g [Cg, H*W] is already the column matrix
        if (algo_ == ConvAlgo::GatherPointwise) {
          gather_strided(s_, x_g, col);
          cols = col;
        } else if (algo_ == ConvAlgo::Im2colGemm && im2col_workers_ > 1) {
          // (Inside another job, the pool runs this on the caller.)
          cpu_thread_pool().parallel_for(rows, [&](int64_t row_begin, int64_t row_end, int) {
            im2col_rows(s_, x_g, col, row_begin, row_end);
          }, im2col_workers_);
          cols = col;
        } else if (algo_ == ConvAlgo::Im2colGemm) {
          im2col(s_, x_g, col);
          cols = col;
        }
        // Y_g [Mg, OSP] = W_g [Mg, Cg*K] x cols [Cg*K, OSP], then the epilogue while Y_g is in cache.
        const int64_t y_offset = (n * s_.filters + grp * mg) * out_size;
        float* y_g = y + y_offset;
        ConvEpilogue epilogue;
        epilogue.bias = bias ? bias + grp * mg : nullptr;
        epilogue.residual = z ? z + y_offset : nullptr;
        epilogue.relu = fusion_ != ConvFusion::None;
        sgemm(false, false, static_cast<int>(mg), static_cast<int>(out_size), static_cast<int>(rows),
              1.0f, w + grp * mg * rows, static_cast<int>(rows), cols, static_cast<int>(out_size),
              0.0f, y_g, static_cast<int>(out_size), kConvGemmBlocks);
        apply_conv_epilogue(epilogue, mg, out_size, y_g);
        apply_conv_activation(act_, y_g, mg * out_size);
      }
    }
  }

  ConvShape s_;
  ConvAlgo algo_;
  bool has_bias_;
  ConvFusion fusion_;
  ConvActivation act_;  // Conv+Clip, Conv+HardSwish, Conv+Swish: after the epilogue
  int workers_;  // the most the images are split across
  int im2col_workers_ = 1;  // Im2colGemm at batch 1: the most one im2col's rows are split across
  std::unique_ptr<TapGemm> direct_;  // ConvAlgo::Direct only: one image-group
  int64_t chunks_ = 1;                  // ConvAlgo::Direct: items per image
};

// Why a conv is not a plain GEMM over X (for the plan's rejected list).
std::string why_not_pointwise(const ConvGeometry& g) {
  if (g.kernel_size() != 1) return "kernel is " + g.kernel_str();
  if (g.has_padding()) return "padding " + shape_str(g.pads_begin) + " / " + shape_str(g.pads_end);
  return "strides are " + shape_str(g.strides);
}

// A 1x1 unpadded conv of one group with a stride > 1: its col is X gathered at the strides.
bool is_gather_pointwise(const ConvGeometry& g) {
  return g.kernel_size() == 1 && !g.has_padding() && g.group == 1 && !g.is_pointwise();
}

KernelChoice plan_conv(const Node& node, const std::vector<ValueInfo>& inputs, ConvFusion fusion) {
  const Shape& x = inputs[0].info.shape;
  const Shape& w = inputs[1].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Conv, Shape(x.begin() + 2, x.end()),
                                            Shape(w.begin() + 2, w.end()));
  ConvShape s{x[0], x[1], w[0], g.expanded_to(kConvKernelRank)};
  const bool has_bias = inputs.size() > 2 && inputs[2].present;
  const ConvActivation act = conv_activation_of(node);
  // Split the batch (MACs per image) across the pool's threads as they are now (Note [cpu threads]).
  const int workers = plan_workers(s.batch, s.filters * s.col_rows() * s.g.output_size());
  KernelChoice choice;
  // One group per channel: the direct depthwise kernel (Note [direct depthwise conv]).
  if (g.group > 1) {
    const std::string why_not_depthwise = why_not_depthwise_conv(s);
    if (why_not_depthwise.empty()) {
      const int dw_workers = depthwise_conv_workers(s);
      choice.algorithm = with_threads("direct depthwise " + g.kernel_str(), dw_workers);
      choice.rejected.push_back({"im2col+gemm", "not needed: one channel per group (direct depthwise)"});
      choice.workspace_bytes = depthwise_conv_workspace_bytes(s, dw_workers);
      choice.kernel = make_depthwise_conv(s, has_bias, fusion != ConvFusion::None, fusion == ConvFusion::AddRelu,
                                          dw_workers, act);
      return choice;
    }
    choice.rejected.push_back({"direct depthwise", why_not_depthwise});
  }
  if (g.is_pointwise()) {
    choice.algorithm = with_threads("gemm(1x1)", workers);
    choice.rejected.push_back({"im2col+gemm", "not needed: 1x1 kernel, stride 1, no padding"});
    choice.kernel = std::make_unique<ConvKernel>(std::move(s), ConvAlgo::Pointwise, has_bias, fusion, act, workers);
    return choice;
  }
  choice.rejected.push_back({"gemm(1x1)", why_not_pointwise(g)});
  const std::string why_not_winograd = why_not_winograd_conv(s);
  std::string why_not_direct = is_gather_pointwise(g) ? "a strided 1x1 kernel" : why_not_direct_conv(s);
  if (why_not_direct.empty() && g.has_padding()) {  // Note [padded direct conv]
    if (why_not_winograd.empty()) why_not_direct = "padded, and a 3x3 kernel (winograd)";
    if (s.group_filters() > kPaddedDirectMaxFilters) {
      why_not_direct = "padded, with more than " + std::to_string(kPaddedDirectMaxFilters) + " filters";
    }
  }
  if (why_not_direct.empty()) {
    // Fewer images than twice the threads: each image's filter panels are split too (the sums
    // are the same however they are split).
    const int64_t panels = direct_conv_gemm(s).panels();
    const int64_t threads = cpu_threads();
    // (At least one image and one chunk: an empty batch is never planned, Note [empty tensors],
    // but no zero dim may divide here.)
    const int64_t images = std::max<int64_t>(1, s.batch);
    const int64_t macs = s.filters * s.col_rows() * s.g.output_size();
    // Note [direct conv chunks]: each chunk copies the padded image for itself, so a split pays
    // only past kMinChunkMacs multiply-adds a chunk.
    const int64_t chunks = std::max<int64_t>(
        1, images >= 2 * threads ? 1
                                 : std::min({panels, (2 * threads + images - 1) / images, macs / kMinChunkMacs}));
    const int direct_workers = plan_workers(s.batch * chunks, macs / chunks);
    choice.algorithm = with_threads(g.has_padding() ? "direct (padded copy)" : "direct", direct_workers);
    choice.rejected.push_back({"im2col+gemm", "not needed: small, unit strides (direct)"});
    choice.workspace_bytes = static_cast<size_t>(direct_workers * direct_padded_floats(s)) * sizeof(float);
    choice.kernel = std::make_unique<ConvKernel>(std::move(s), has_bias, fusion, act, direct_workers, chunks);
    return choice;
  }
  choice.rejected.push_back({"direct", why_not_direct});
  if (why_not_winograd.empty()) {
    choice.algorithm = with_threads("winograd F(2x2,3x3)", workers);
    choice.rejected.push_back({"im2col+gemm", "not needed: a 3x3 unit-stride kernel (winograd)"});
    choice.workspace_bytes = winograd_conv_workspace_bytes(s, workers);
    choice.kernel =
        make_winograd_conv(s, has_bias, fusion != ConvFusion::None, fusion == ConvFusion::AddRelu, workers, act);
    return choice;
  }
  choice.rejected.push_back({"winograd F(2x2,3x3)", why_not_winograd});
  // The packed tiles through channels-last copies (Note [nchw convs on the tiles]).
  const float* filter = inputs[1].constant && inputs[1].info.dtype == DType::Float32
                            ? reinterpret_cast<const float*>(inputs[1].constant->data.data()) : nullptr;
  const std::string why_not_tiles = why_not_nchw_tiles(s, g.rank(), filter != nullptr);
  if (why_not_tiles.empty()) {
    KernelChoice tiles = make_nchw_tiles_conv(s, filter, has_bias, fusion != ConvFusion::None,
                                              fusion == ConvFusion::AddRelu, act);
    tiles.rejected = std::move(choice.rejected);
    tiles.rejected.push_back({"im2col+gemm", "not needed: the packed tiles (Note [nchw convs on the tiles])"});
    return tiles;
  }
  choice.rejected.push_back({"nchw->nhwc packed gemm", why_not_tiles});
  ConvAlgo algo = ConvAlgo::Im2colGemm;
  if (is_gather_pointwise(g)) {
    algo = ConvAlgo::GatherPointwise;
    choice.algorithm = with_threads("gather+gemm(1x1)", workers);
    choice.rejected.push_back({"im2col+gemm", "not needed: 1x1 kernel, no padding, one group"});
  } else {
    choice.algorithm = with_threads("im2col+gemm", workers);
  }
  // One col [Cg*K, OSP] (one group of one image) per worker.
  choice.workspace_bytes = static_cast<size_t>(workers * s.col_rows() * s.g.output_size()) * sizeof(float);
  // Batch 1: the im2col's rows across the pool (Note [im2col across the pool]).
  const int im2col_workers =
      algo == ConvAlgo::Im2colGemm && s.batch == 1 ? plan_workers(s.col_rows(), s.g.output_size()) : 1;
  if (im2col_workers > 1) choice.algorithm = with_threads("im2col+gemm", im2col_workers);
  choice.kernel = std::make_unique<ConvKernel>(std::move(s), algo, has_bias, fusion, act, workers, im2col_workers);
  return choice;
}

KernelFactory conv_factory(ConvFusion fusion) {
  return [fusion](const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
    return plan_conv(node, inputs, fusion);
  };
}

}  // namespace

void register_cpu_conv_kernels(KernelRegistry& r) {
  r.add("Conv", conv_factory(ConvFusion::None));
  r.add("Conv+Relu", conv_factory(ConvFusion::Relu));
  r.add("Conv+Add+Relu", conv_factory(ConvFusion::AddRelu));
  // fuse_conv_activation's ops: the activation read from the node (conv_activation_of).
  for (const char* op : {"Conv+Clip", "Conv+HardSwish", "Conv+Swish"}) r.add(op, conv_factory(ConvFusion::None));
}

}  // namespace dnnx
