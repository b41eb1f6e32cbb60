// GRU and RNN on the CPU ("gemm+gates", as LSTM in lstm_cpu.cc): one GEMM computes X·W^T plus
// the biases for every step and direction at once (on W packed at plan time where it is a
// constant: "packed x·W^T"); then, per direction and step, the products with R for the whole
// batch (dot products at a small batch, Note [recurrent dot product]; at batch 1 a constant R's
// packed panels, "panels+gates", Note [gru panels]) and a plain loop for the gate math
// (recurrent_cell_cpu.cc); at a batch of a few rows, TapGemms over R^T ("tap+gates", Note
// [recurrent step tiles]). The two directions of a bidirectional
// node share nothing but xw, so they run on two threads where the pool has them, each with its
// own buffers: the same bits for any thread count.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/conv/tap_gemm_cpu.h"
#include "backends/cpu/rnn/recurrent_cell_cpu.h"
#include "backends/cpu/rnn/recurrent_panels_cpu.h"
#include "backends/cpu/rnn/recurrent_product_cpu.h"
#include "backends/cpu/rnn/rnn_layout_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// Note [gru panels]
// At batch 1 a GRU or RNN step is the matrix-vector product h [1, H] · R^T, as an LSTM's is, and
// it takes the LSTM's answer (Note [recurrent panels]): a constant R's transpose packed once, at
// plan time, into column panels that a step reads as one contiguous stream. GRU's products are
// split as the gate math needs them: under linear_before_reset one panel set over all of R
// [3H, H]; otherwise one over the z and r blocks [2H, H] and one over the h block [H, H], which
// multiplies r ⊙ h_prev. W is packed too (Note [lstm projection]): X·W^T + the biases on the
// tiles, with the bias row of recurrent_projection_bias. Each output's sum runs over k in order
// (panels) or in the tiles' fixed order, whatever the thread: the same bits on any thread count,
// not the dot products' bits. A fine-tuned R or W (Note [mutable constants]) keeps the unpacked
// path. Measured on the 2-core EPYC (1 thread): the node [50, 1, 320], hidden 128, bidirectional,
// 0.53-0.54 -> 0.44-0.47 ms under linear_before_reset (onnxruntime 0.49-0.52), 0.58-0.60 ->
// 0.46 without; the zoo's speech GRU's two such layers 0.97-1.05 -> 0.82-0.83 ms (onnxruntime
// 0.91-0.95; bench/RESULTS.md, "CPU: the GRU at batch 1").

// Note [recurrent step tiles]
// At a batch of kTapRows rows or more, a step's products with R were dot products (Note
// [recurrent dot product]): each output one horizontal sum. The LSTM's answer (Note [lstm step
// panels]) serves GRU and RNN too: R's blocks transposed and packed once per call into panels of
// the tile's width, and each step's product one TapGemm over them (the batch's rows in register
// panels, every output summed over k in order): the same bits on any thread count, not the dot
// products'. Split as the gate math needs it (Note [gru panels]). Measured on the 2-core EPYC
// (AVX-512), the zoo's speech GRU at batch 16, one thread: see bench/RESULTS.md.
constexpr int64_t kTapRows = 4;
constexpr int64_t kTapSteps = 4;
constexpr int64_t kMaxTapWeights = int64_t{1} << 16;  // R^T in 256 KB

// Which optional inputs and outputs the node has (fixed at plan time: the call's pointer arrays
// are only as long as the node's input and output lists).
struct RecurrentPresence {
  bool b = false, sequence_lens = false, initial_h = false;
  bool y = false, y_h = false;
};

class RecurrentKernel final : public Kernel {
 public:
  // constant_r: R [num_dir, G*H, H] where it is a constant that no trainer changes, else null;
  // projection: X·W^T on W packed at plan time, or empty (sgemm). Note [gru panels].
  RecurrentKernel(std::string where, const RecurrentAttributes& attrs, const LstmDims& dims,
                  const RecurrentPresence& has, int workers, const float* constant_r, PackedProduct projection)
      : where_(std::move(where)), attrs_(attrs), d_(dims), idx_(dims, attrs.layout), has_(has),
        zeros_(static_cast<size_t>(dims.hidden), 0.0f), workers_(workers),
        projection_(std::move(projection.kernel)), projection_bytes_(projection.workspace_bytes),
        tap_(tap(attrs, dims)),
        step_(panel_tap_gemm(tap_ ? dims.batch : 0, first_block(attrs, dims), dims.hidden, tap_vectors(dims))),
        step_h_(panel_tap_gemm(tap_ ? dims.batch : 0, attrs.gates() * dims.hidden - first_block(attrs, dims),
                               dims.hidden, tap_vectors(dims))) {
    if (constant_r && panels(dims)) {
      const int64_t h = dims.hidden, gh = attrs.gates() * h;
      // GRU without linear_before_reset: z and r first, then the h block on its own.
      const int64_t first = first_block(attrs, dims);
      for (int64_t dir = 0; dir < dims.num_dir; ++dir) {
        const float* r = constant_r + dir * gh * h;
        panels_[dir] = RecurrentPanels(first, h, r);
        if (first < gh) panels_h_[dir] = RecurrentPanels(gh - first, h, r + first * h);
      }
    }
  }

  // Whether a constant R's steps run on packed panels: batch 1 on a CPU with AVX-512.
  static bool panels(const LstmDims& d) { return d.batch == 1 && d.hidden > 0 && recurrent_panels_available(); }
  bool packed_steps() const { return !panels_[0].empty(); }
  // Whether the steps run on TapGemms (Note [recurrent step tiles]).
  static bool tap(const RecurrentAttributes& attrs, const LstmDims& d) {
    return !panels(d) && d.batch >= kTapRows && d.seq >= kTapSteps &&
           attrs.gates() * d.hidden * d.hidden <= kMaxTapWeights;
  }
  bool tap_steps() const { return tap_; }
  bool packed_projection() const { return projection_ != nullptr; }

  // The sum of the Buffers below: xw, then per direction its step buffers and xg's pointers
  // (kept in the workspace: nothing is allocated per call), then per direction its tap area
  // (tap steps only), then the packed projection's bias row [num_dir*G*H].
  static size_t workspace_floats(const RecurrentAttributes& attrs, const LstmDims& d) {
    return static_cast<size_t>(xw_floats(attrs, d) + d.num_dir * (direction_floats(attrs, d) + tap_floats(attrs, d)) +
                               d.num_dir * attrs.gates() * d.hidden);
  }
  // Then the packed projection's own workspace, 64-byte aligned.
  size_t workspace_bytes() const { return projection_offset() + projection_bytes_; }

  void run(const KernelArgs& args) const override {
    const int32_t* lens = has_.sequence_lens ? args.in<int32_t>(kRecSequenceLens) : nullptr;
    check_sequence_lens(where_, lens, d_);
    float* xw = static_cast<float*>(args.workspace);
    const float* b = has_.b ? args.in(kRecB) : nullptr;
    if (projection_) {
      float* bias = xw + workspace_floats(attrs_, d_) - d_.num_dir * attrs_.gates() * d_.hidden;
      recurrent_projection_bias(attrs_, d_, b, 0, d_.num_dir, bias);
      const void* inputs[3] = {args.in(kRecX), nullptr, bias};
      void* outputs[1] = {xw};
      KernelArgs inner{inputs, outputs, static_cast<char*>(args.workspace) + projection_offset()};
      projection_->run(inner);
    } else {
      recurrent_input_projection(attrs_, d_, args.in(kRecX), args.in(kRecW), b, 0, d_.num_dir, xw);
    }
    if (workers_ <= 1) {  // on the caller, outside any pool job: a large step's sgemm splits across the pool
      for (int64_t dir = 0; dir < d_.num_dir; ++dir) run_direction(args, dir, lens, xw, buffers(args.workspace, dir));
      return;
    }
    cpu_thread_pool().parallel_for(d_.num_dir, [&](int64_t begin, int64_t end, int) {
      for (int64_t dir = begin; dir < end; ++dir) run_direction(args, dir, lens, xw, buffers(args.workspace, dir));
    }, workers_);
  }

 private:
  // One direction's buffers.
  struct Buffers {
    float* hr;    // [batch, G*H]: the products with R of the current step
    float* acts;  // [batch, G*H]: GRU's gate activations of the current step
    float* h;     // [batch, H]: hidden state
    float* rh;    // [batch, H]: GRU's r ⊙ h_prev
    float* hh;    // [batch, H]: GRU's h_prev·Rh^T + Rbh
    const float** xg;  // [batch]: the step's xw rows (RecurrentStepBuffers::xg)
    float* tap;        // tap steps: R^T scratch, then R's packed panels (tap_floats), else null
  };
  // Floats of one direction's Buffers: xg's pointers first (2 floats each, from the share's
  // first 8-byte boundary: 1 float of slack), then the floats.
  static int64_t direction_floats(const RecurrentAttributes& attrs, const LstmDims& d) {
    const int64_t gh = attrs.gates() * d.hidden, bh = d.batch * d.hidden;
    return 1 + 2 * d.batch + 2 * d.batch * gh + 3 * bh;
  }
  // R's first block: GRU without linear_before_reset multiplies z and r first, then the h block
  // by r ⊙ h_prev on its own (Note [gru panels]); otherwise all of R at once.
  static int64_t first_block(const RecurrentAttributes& attrs, const LstmDims& d) {
    return (attrs.cell == RecurrentCell::Gru && !attrs.linear_before_reset ? 2 : attrs.gates()) * d.hidden;
  }
  static int tap_vectors(const LstmDims& d) { return TapGemm::max_vectors(std::max<int64_t>(1, d.batch)); }
  // One direction's tap area: R^T [H, G*H] scratch, then the panels of the first block and of the
  // h block (Note [recurrent step tiles]).
  static int64_t tap_floats(const RecurrentAttributes& attrs, const LstmDims& d) {
    if (!tap(attrs, d)) return 0;
    const int64_t h = d.hidden, gh = attrs.gates() * h, first = first_block(attrs, d), width = 8 * tap_vectors(d);
    return gh * h + tap_panel_floats(first, h, width) + (gh > first ? tap_panel_floats(gh - first, h, width) : 0);
  }
  size_t projection_offset() const { return (workspace_floats(attrs_, d_) * sizeof(float) + 63) / 64 * 64; }
  static int64_t xw_floats(const RecurrentAttributes& attrs, const LstmDims& d) {
    return d.seq * d.batch * d.num_dir * attrs.gates() * d.hidden;
  }
  Buffers buffers(void* workspace, int64_t dir) const {
    const int64_t gh = attrs_.gates() * d_.hidden, bh = d_.batch * d_.hidden;
    float* share = static_cast<float*>(workspace) + xw_floats(attrs_, d_) + dir * direction_floats(attrs_, d_);
    const uintptr_t at = (reinterpret_cast<uintptr_t>(share) + 7) & ~uintptr_t{7};
    Buffers buf;
    buf.xg = reinterpret_cast<const float**>(at);
    buf.hr = reinterpret_cast<float*>(at) + 2 * d_.batch;
    buf.acts = buf.hr + d_.batch * gh;
    buf.h = buf.acts + d_.batch * gh;
    buf.rh = buf.h + bh;
    buf.hh = buf.rh + bh;
    buf.tap = tap_ ? static_cast<float*>(workspace) + xw_floats(attrs_, d_) + d_.num_dir * direction_floats(attrs_, d_) +
                         dir * tap_floats(attrs_, d_)
                   : nullptr;
    return buf;
  }

  int64_t length(const int32_t* lens, int64_t b) const { return lens ? lens[b] : d_.seq; }

  void run_direction(const KernelArgs& args, int64_t dir, const int32_t* lens, const float* xw,
                     const Buffers& buf) const {
    const int64_t h = d_.hidden, gh = attrs_.gates() * h, width = d_.num_dir * gh;
    idx_.load_state(has_.initial_h ? args.in(kRecInitialH) : nullptr, dir, buf.h);

    RecurrentStepParams p;
    p.cell = attrs_.cell;
    p.linear_before_reset = attrs_.linear_before_reset;
    if (attrs_.cell == RecurrentCell::Rnn) p.activation = attrs_.activations[dir];
    p.batch = d_.batch;
    p.hidden = h;
    p.clip = attrs_.has_clip ? attrs_.clip : std::numeric_limits<float>::infinity();
    p.r = args.in(kRecR) + dir * gh * h;
    // Rbh: the last H of the R biases [Rbz, Rbr, Rbh] of this direction.
    p.rbh = has_.b && attrs_.linear_before_reset ? args.in(kRecB) + dir * 2 * gh + gh + 2 * h : zeros_.data();
    if (!panels_[dir].empty()) p.panels = &panels_[dir];
    if (!panels_h_[dir].empty()) p.panels_h = &panels_h_[dir];
    if (float* rt = buf.tap) {  // R's blocks transposed and packed for this call's steps
      const int64_t first = first_block(attrs_, d_), width = 8 * tap_vectors(d_);
      float* first_panels = rt + gh * h;
      recurrent_transpose(first, h, p.r, rt);
      pack_tap_panels(rt, first, h, width, first_panels);
      p.tap = &step_;
      p.tap_b = first_panels;
      if (gh > first) {
        float* h_panels = first_panels + tap_panel_floats(first, h, width);
        recurrent_transpose(gh - first, h, p.r + first * h, rt);
        pack_tap_panels(rt, gh - first, h, width, h_panels);
        p.tap_h = &step_h_;
        p.tap_h_b = h_panels;
      }
    }

    const float** xg = buf.xg;
    RecurrentStepBuffers sb;
    sb.xg = xg;
    sb.h_prev = buf.h;
    sb.h_next = buf.h;  // in place: the step reads a row's h_prev before it writes the row
    sb.hr = buf.hr;
    sb.rh = buf.rh;
    sb.acts = buf.acts;
    sb.hh = buf.hh;

    // The reverse pass of a bidirectional node is its second direction.
    const bool reverse = attrs_.direction == LstmDirection::Reverse || dir == 1;
    float* y = has_.y ? args.out(kRecY) : nullptr;
    int64_t steps = 0;
    for (int64_t b = 0; b < d_.batch; ++b) steps = std::max(steps, length(lens, b));
    for (int64_t s = 0; s < steps; ++s) {
      for (int64_t b = 0; b < d_.batch; ++b) {
        const int64_t len = length(lens, b);
        // A reverse pass starts at each sequence's own last step; an ended sequence is skipped.
        const int64_t t = reverse ? len - 1 - s : s;
        xg[b] = s < len ? xw + idx_.x_row(t, b) * width + dir * gh : nullptr;
      }
      recurrent_step(p, sb);
      for (int64_t b = 0; y && b < d_.batch; ++b) {
        const int64_t len = length(lens, b);
        if (s >= len) continue;
        const int64_t t = reverse ? len - 1 - s : s;
        std::memcpy(y + idx_.y_offset(t, dir, b), buf.h + b * h, h * sizeof(float));
      }
    }
    for (int64_t b = 0; y && b < d_.batch; ++b) {  // Y is zero past each sequence's length
      for (int64_t t = length(lens, b); t < d_.seq; ++t) std::fill_n(y + idx_.y_offset(t, dir, b), h, 0.0f);
    }
    if (has_.y_h) {
      // A zero-length sequence ends in a zero state (as onnxruntime does), not in the initial one.
      for (int64_t b = 0; b < d_.batch; ++b) {
        if (length(lens, b) == 0) std::fill_n(buf.h + b * h, h, 0.0f);
      }
      idx_.store_state(buf.h, dir, args.out(kRecYH));
    }
  }

  std::string where_;  // for errors about sequence_lens, found only at run time
  RecurrentAttributes attrs_;
  LstmDims d_;
  RnnLayoutIndex idx_;
  RecurrentPresence has_;
  std::vector<float> zeros_;  // [H]: Rbh where the step must not add one
  int workers_;               // 2 for a bidirectional node where the pool has 2 threads, else 1
  std::unique_ptr<Kernel> projection_;  // X·W^T on W packed at plan time, or null: sgemm
  size_t projection_bytes_;             // its workspace
  RecurrentPanels panels_[2];           // per direction, R^T (GRU: its first block) packed, or empty
  RecurrentPanels panels_h_[2];         // GRU without linear_before_reset: R's h block, packed
  bool tap_;                            // the steps on TapGemms (Note [recurrent step tiles])
  TapGemm step_, step_h_;               // over R's first block, and (GRU without lbr) its h block
};

KernelChoice plan_recurrent(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const RecurrentAttributes attrs = parse_recurrent_attributes(node);
  const LstmDims dims = recurrent_dims(node, attrs, inputs);
  auto in = [&](size_t i) { return i < inputs.size() && inputs[i].present; };
  RecurrentPresence has;
  has.b = in(kRecB);
  has.sequence_lens = in(kRecSequenceLens);
  has.initial_h = in(kRecInitialH);
  has.y = node.has_output(kRecY);
  has.y_h = node.has_output(kRecYH);

  // The directions across the pool's threads; each one's work is its steps' products.
  const int workers = plan_workers(dims.num_dir, dims.seq * dims.batch * attrs.gates() * dims.hidden * dims.hidden);
  const int64_t width = dims.num_dir * attrs.gates() * dims.hidden;
  // The packed projection always takes a bias row (zeros without B).
  auto kernel = std::make_unique<RecurrentKernel>(
      node.where(), attrs, dims, has, workers, recurrent_constant_weights(inputs[kRecR]),
      plan_recurrent_projection(dims.seq * dims.batch, dims.input, width, inputs[kRecW], true));
  KernelChoice choice;
  choice.algorithm = with_threads(std::string(kernel->packed_projection() ? "packed x·W^T, " : "") +
                                      (kernel->packed_steps() ? "panels+gates"
                                       : kernel->tap_steps()  ? "tap+gates"
                                                              : "gemm+gates"),
                                  workers);
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cpu_recurrent_kernels(KernelRegistry& r) {
  r.add("GRU", plan_recurrent);
  r.add("RNN", plan_recurrent);
}

}  // namespace dnnx
