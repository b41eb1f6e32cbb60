// MaxPool on the CPU, NCHW float32, int8 or uint8 (one template), separably: max over a window is
// max over its columns of the max over its rows, so each output row first takes, column by column,
// the max of the window's input rows (contiguous, vectorised), then the max over the window's
// columns at the stride (one dedicated loop for the common 2-wide, stride-2 window). Taps in the
// padding count as -inf, so they never win (the lowest value of an integer type stands for -inf).
// Measured on this project's 2-core CI machine (AMD EPYC, 1 thread), LeNet's pools at batch 64
// (2x2, stride 2, on 20x24x24 and 50x8x8 planes) took 0.71 and 0.44 ms with a direct loop over each
// output's taps, against onnxruntime's 0.22 and 0.15 ms. The planes are split across the CPU thread
// pool. Every spatial rank runs as 3-D, with unit dims prepended (ConvGeometry::expanded_to).
// A float32 2-D pool of 2x2 windows at stride 2 runs max_pool_2x2_cpu.cc's registers instead
// (Note [max pool 2x2]), with the same results.
//
// Note [strided pool columns]: on 8-bit values a window of k columns at stride s > 1 (ResNet's
// 3x3 stride-2 stem pool in a QDQ file) took, per output, k strided byte reads into a running
// max, which the compiler does not vectorize (the QDQ ResNet-50's stem pool: 0.42 ms, onnxruntime's
// 0.07). Instead each row first takes the max of every k consecutive columns (contiguous: it
// vectorizes), and the outputs whose window lies inside the row then read one of those at the
// stride; the outputs at the padded edges keep the per-tap loop: 0.42 -> 0.25 ms. The max of each
// window is taken in the same order as the per-tap loop (the lowest value, then tap 0, 1, ...),
// so the results are the same bits. float32 keeps the per-tap loop, whose strided float loads
// the compiler vectorizes (the same stem pool on floats: 0.29 ms that way, 0.42 this way).
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/kernel_registry.h"
#include "backends/cpu/pool/max_pool_2x2_cpu.h"
#include "backends/cpu/pool/max_pool_bytes_cpu.h"
#include "backends/cpu/pool/max_pool_indices_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/conv/conv_geometry.h"

namespace dnnx {

namespace {

constexpr size_t kKernelRank = 3;  // D, H, W
enum Dim { kD = 0, kH = 1, kW = 2 };

// D and H: the taps of one output index's window that read inside the input.
struct TapRange {
  int64_t start;     // the window's first input index (negative inside the begin padding)
  IndexRange taps;   // tap k reads start + k * dilation
};

std::vector<TapRange> tap_table(const ConvGeometry& g, size_t dim) {
  std::vector<TapRange> table;
  for (int64_t o = 0; o < g.output[dim]; ++o) table.push_back({g.window_start(dim, o), g.taps_inside(dim, o)});
  return table;
}

// W, the other way round: for tap kw, the output columns [lo, hi) that read inside the input
// row, at row[ow * stride + offset]. Looping over ow innermost vectorises.
struct ColumnRange {
  int64_t offset;
  IndexRange columns;
};

std::vector<ColumnRange> column_table(const ConvGeometry& g) {
  std::vector<ColumnRange> table;
  for (int64_t k = 0; k < g.kernel[kW]; ++k) {
    table.push_back({k * g.dilations[kW] - g.pads_begin[kW], g.outputs_inside(kW, k)});
  }
  return table;
}

// The value padding taps count as: -inf, or an integer type's lowest.
template <class T>
constexpr T lowest_value() {
  return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}

template <class T>
class MaxPoolKernel final : public Kernel {
 public:
  MaxPoolKernel(ConvGeometry g, int64_t planes, int workers)
      : g_(std::move(g)), planes_(planes), workers_(workers), taps_d_(tap_table(g_, kD)),
        taps_h_(tap_table(g_, kH)), columns_(column_table(g_)),
        pairs_(pairs_of(g_)), inner_(inner_columns(g_)), rows_per_worker_(rows_per_worker(g_)),
        square_pairs_(std::is_same_v<T, float> && max_pool_2x2_applies(g_)),
        byte_rows_(sizeof(T) == 1 ? plan_byte_pool_rows(g_) : BytePoolRows{}) {}

  // x [N*C planes, D, H, W] -> y [N*C planes, OD, OH, OW]. Workspace: one input row per worker.
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    T* rows = static_cast<T*>(args.workspace);
    cpu_thread_pool().parallel_for(planes_, [&](int64_t begin, int64_t end, int worker) {
      if constexpr (std::is_same_v<T, float>) {
        if (square_pairs_) {  // Note [max pool 2x2]
          if (2 * g_.output[kH] == g_.input[kH]) {  // the planes' rows pair up as one plane's
            max_pool_2x2_plane(x + begin * g_.input_size(), g_.input[kW], (end - begin) * g_.output[kH],
                               g_.output[kW], y + begin * g_.output_size());
            return;
          }
          for (int64_t p = begin; p < end; ++p) {
            max_pool_2x2_plane(x + p * g_.input_size(), g_.input[kW], g_.output[kH], g_.output[kW],
                               y + p * g_.output_size());
          }
          return;
        }
      }
      T* row_max = rows + rows_per_worker_ * worker * row_stride(g_);
      for (int64_t p = begin; p < end; ++p) {
        pool_plane(x + p * g_.input_size(), y + p * g_.output_size(), row_max, row_max + row_stride(g_));
      }
    }, workers_);
  }

  // One row per worker for the window rows' max, and one more for Note [strided pool columns]'s
  // column maxima where that path runs.
  static size_t workspace_bytes(const ConvGeometry& g, int workers) {
    return static_cast<size_t>(rows_per_worker(g) * workers * row_stride(g)) * sizeof(T);
  }
  static int64_t rows_per_worker(const ConvGeometry& g) {
    const IndexRange inner = inner_columns(g);
    return inner.hi > inner.lo ? 2 : 1;
  }

  // Each worker's row starts on its own 128-byte block (a cache-line pair, which the adjacent-line
  // prefetcher moves together): rows written at every window row by two threads must not share
  // a line. Packed rows (LeNet's 24 floats, 96 bytes) made 2-thread pooling 2-3x slower than 1
  // thread on this project's 2-core CI machine (false sharing).
  static int64_t row_stride(const ConvGeometry& g) {
    constexpr int64_t kFloatsPerBlock = 128 / sizeof(T);
    return (g.input[kW] + kFloatsPerBlock - 1) / kFloatsPerBlock * kFloatsPerBlock;
  }

 private:
  void pool_plane(const T* x, T* y, T* row_max, T* col_max) const {
    const int64_t in_h = g_.input[kH], in_w = g_.input[kW], out_w = g_.output[kW];
    for (const TapRange& td : taps_d_) {
      for (const TapRange& th : taps_h_) {
        // The column-wise max of the window's input rows: the row itself when it is the only one.
        const T* src = nullptr;
        for (int64_t kd = td.taps.lo; kd < td.taps.hi; ++kd) {
          const int64_t id = td.start + kd * g_.dilations[kD];
          for (int64_t kh = th.taps.lo; kh < th.taps.hi; ++kh) {
            const T* row = x + (id * in_h + th.start + kh * g_.dilations[kH]) * in_w;
            if (!src) {
              src = row;
            } else {
              if (src != row_max) std::copy(src, src + in_w, row_max);
              for (int64_t i = 0; i < in_w; ++i) row_max[i] = std::max(row_max[i], row[i]);
              src = row_max;
            }
          }
        }
        pool_columns(src, y, col_max);
        y += out_w;
      }
    }
  }

  // y[ow] = the max over the window's columns of src (no window rows: all padding, -inf).
  void pool_columns(const T* src, T* y, T* col_max) const {
    const int64_t out_w = g_.output[kW];
    if constexpr (sizeof(T) == 1) {
      if (src && byte_rows_.usable()) {  // Note [8-bit pool rows]
        pool_byte_row(byte_rows_, reinterpret_cast<const uint8_t*>(src), std::is_signed_v<T>, reinterpret_cast<uint8_t*>(y));
        return;
      }
    }
    if (src && pairs_) {
      for (int64_t ow = 0; ow < out_w; ++ow) y[ow] = std::max(src[2 * ow], src[2 * ow + 1]);
      return;
    }
    if (src && inner_.hi > inner_.lo) {  // Note [strided pool columns]
      strided_columns(src, y, col_max);
      return;
    }
    per_tap_columns(src, y, 0, out_w);
  }

  // Outputs [lo, hi) by the per-tap loop.
  void per_tap_columns(const T* src, T* y, int64_t lo, int64_t hi) const {
    std::fill(y + lo, y + hi, lowest_value<T>());
    if (!src) return;
    const int64_t stride_w = g_.strides[kW];
    for (const ColumnRange& c : columns_) {
      for (int64_t ow = std::max(lo, c.columns.lo); ow < std::min(hi, c.columns.hi); ++ow) {
        y[ow] = std::max(y[ow], src[ow * stride_w + c.offset]);
      }
    }
  }

  // Note [strided pool columns]: the inner outputs from the maxima of k consecutive columns.
  void strided_columns(const T* src, T* y, T* col_max) const {
    const int64_t k = g_.kernel[kW], stride_w = g_.strides[kW], starts = g_.input[kW] - k + 1;
    std::fill(col_max, col_max + starts, lowest_value<T>());
    for (int64_t t = 0; t < k; ++t) {
      const T* tap = src + t;
      for (int64_t i = 0; i < starts; ++i) col_max[i] = std::max(col_max[i], tap[i]);
    }
    per_tap_columns(src, y, 0, inner_.lo);
    for (int64_t ow = inner_.lo; ow < inner_.hi; ++ow) y[ow] = col_max[ow * stride_w - g_.pads_begin[kW]];
    per_tap_columns(src, y, inner_.hi, g_.output[kW]);
  }

  // A 2-wide window at stride 2, no W padding: every output column reads two inputs.
  static bool pairs_of(const ConvGeometry& g) {
    return g.kernel[kW] == 2 && g.strides[kW] == 2 && g.dilations[kW] == 1 && g.pads_begin[kW] == 0 &&
           2 * g.output[kW] <= g.input[kW];
  }

  // Note [strided pool columns]: the outputs whose whole window lies in the row (empty where the
  // path does not apply: float32, stride 1, dilated columns, or the 2-wide pairs).
  static IndexRange inner_columns(const ConvGeometry& g) {
    const int64_t k = g.kernel[kW], s = g.strides[kW], pad = g.pads_begin[kW], in_w = g.input[kW];
    if (sizeof(T) != 1 || pairs_of(g) || s < 2 || k < 2 || g.dilations[kW] != 1 || k > in_w) return IndexRange{0, 0};
    const int64_t lo = (pad + s - 1) / s;                                // first ow with ow * s - pad >= 0
    const int64_t hi = std::min(g.output[kW], (in_w - k + pad) / s + 1);  // last start <= in_w - k
    return hi > lo ? IndexRange{lo, hi} : IndexRange{0, 0};
  }

  ConvGeometry g_;  // expanded to 3 spatial dims
  int64_t planes_;  // N * C
  int workers_;     // the most the planes are split across
  std::vector<TapRange> taps_d_;  // per output depth index
  std::vector<TapRange> taps_h_;  // per output row
  std::vector<ColumnRange> columns_;  // per kernel column
  bool pairs_;  // a 2-wide window at stride 2, no W padding: every output column reads two inputs
  IndexRange inner_;  // Note [strided pool columns]
  int64_t rows_per_worker_;  // workspace rows per worker (rows_per_worker)
  bool square_pairs_;        // float32 2x2 at stride 2: max_pool_2x2_plane (Note [max pool 2x2])
  BytePoolRows byte_rows_;   // 8-bit rows by permutes (Note [8-bit pool rows]), where usable
};

KernelChoice plan_max_pool(const Node& node, const std::vector<ValueInfo>& inputs,
                           const std::vector<TensorInfo>&) {
  if (node.has_output(1)) return plan_max_pool_with_indices(node, inputs);  // Indices: max_pool_indices_cpu.cc
  const Shape& x = inputs[0].info.shape;
  const ConvGeometry g = make_conv_geometry(node, WindowOp::Pool, Shape(x.begin() + 2, x.end()),
                                            node.attr_ints("kernel_shape", {}));
  const ConvGeometry g3 = g.expanded_to(kKernelRank);
  const int workers = plan_workers(x[0] * x[1], g3.output_size() * g3.kernel_size());
  KernelChoice choice;
  const bool square = inputs[0].info.dtype == DType::Float32 && max_pool_2x2_applies(g3);
  choice.algorithm = with_threads(square ? "direct 2x2" : "direct", workers);
  auto make = [&](auto zero) {
    using T = decltype(zero);
    choice.workspace_bytes = square ? 0 : MaxPoolKernel<T>::workspace_bytes(g3, workers);  // no scratch rows
    choice.kernel = std::make_unique<MaxPoolKernel<T>>(g3, x[0] * x[1], workers);
  };
  switch (inputs[0].info.dtype) {
    case DType::Int8: make(int8_t{}); break;
    case DType::UInt8: make(uint8_t{}); break;
    default: make(float{});
  }
  return choice;
}

}  // namespace

void register_cpu_pool_kernels(KernelRegistry& r) {
  r.add("MaxPool", plan_max_pool).with_dtypes({DType::Float32, DType::Int8, DType::UInt8});
}

}  // namespace dnnx
