// LSTM on the CPU ("gemm+gates"): X·W^T plus both biases for every time step and direction
// (one GEMM, or one per block of batch rows); then, per direction, block of batch rows and
// step, one GEMM computes H_prev·R^T for the block and a plain loop does the gate math (ONNX
// gate order i, o, f, c throughout).
//
// Note [lstm batch blocks]
// Batch rows never meet in an LSTM, so each block of kBlockRows rows runs its whole sequence on
// its own (its rows of X·W^T too, in the first direction's job), and the blocks are split
// across the CPU thread pool: one job per direction instead of one per step, and no thread
// waits for another between steps. The GEMMs are TapGemms
// (tap_gemm_cpu.h) over W^T and R^T, transposed into the workspace once per call: OpenBLAS's
// sgemm repacked R for every step ([64x32]x[32x128] on the example LSTM), and a block's product
// computed by it would differ in the last bits from the whole batch's. A TapGemm's sums do not
// depend on the rows around them, so the results are the same for any thread count and block.
// Measured on the example model (batch 64, 16 steps, hidden 32; this project's 2-core CI
// machine, with the AVX2 cell of lstm_cell_avx2_cpu.cc): 1 thread 0.52 -> 0.32 ms, 2 threads
// 0.52 -> 0.26 ms, onnxruntime 0.32 and 0.26 ms in the same minutes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <limits>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/dense/blas.h"
#include "backends/cpu/rnn/lstm_cell_avx2_cpu.h"
#include "backends/cpu/rnn/rnn_layout_cpu.h"
#include "backends/cpu/conv/tap_gemm_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/kernel_registry.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx {

namespace {

constexpr int64_t kGates = 4;  // i, o, f, c
constexpr int64_t kBlockRows = 16;  // batch rows a block runs together (Note [lstm batch blocks])
// A TapGemm reads all of B for every panel of rows: W^T and R^T are kept to 256 KB (in L2).
// Larger LSTMs keep OpenBLAS's sgemm, over the whole batch at once (one block).
constexpr int64_t kMaxTapWeights = int64_t{1} << 16;

// Which optional inputs and outputs the node has (fixed at plan time: the call's pointer arrays
// are only as long as the node's input and output lists).
struct LstmPresence {
  bool b = false, sequence_lens = false, initial_h = false, initial_c = false, p = false;
  bool y = false, y_h = false, y_c = false;
};

// What the gate math of one direction needs besides the inputs of one step.
struct CellParams {
  int64_t hidden = 0;
  float clip = 0.0f;               // +inf when the node has no clip
  bool input_forget = false;
  const float* peephole = nullptr;  // [3H] in order i, o, f (zeros when the node has no P)
};

inline float clamp(float x, float limit) { return std::min(std::max(x, -limit), limit); }

// tanh(x) = 2·sigmoid(2x) - 1. glibc's tanhf goes through expm1f and took about half of an LSTM's
// time; expf is several times cheaper. The absolute error stays below 2e-7 (the relative error
// grows only where |x| < 1e-3), and absolute error is what the next step's GEMM sees.
inline float tanh_via_sigmoid(float x) { return 2.0f * sigmoidf(2.0f * x) - 1.0f; }

// One cell update of one batch row. xg is X_t·W^T + Wb + Rb and hg is H_{t-1}·R^T, each [4H] in
// gate order i, o, f, c; c is the cell state [H], updated in place; h [H] receives H_t.
// The loop is branch-free so that it vectorises (absent peepholes are zeros, input_forget is a
// 0/1 blend): with branches it ran scalar and took 80% of a small LSTM's time.
// Every buffer is distinct (restrict): without it the alias checks outnumber what GCC versions.
DNNX_VECTOR_CLONES
void cell_step(const CellParams& p, const float* __restrict xg, const float* __restrict hg,
               float* __restrict c, float* __restrict h) {
  const int64_t n = p.hidden;
  const float* xi = xg;
  const float* xo = xg + n;
  const float* xf = xg + 2 * n;
  const float* xc = xg + 3 * n;
  const float* hi = hg;
  const float* ho = hg + n;
  const float* hf = hg + 2 * n;
  const float* hc = hg + 3 * n;
  const float* pi = p.peephole;  // [3H]: i, o, f
  const float* po = p.peephole + n;
  const float* pf = p.peephole + 2 * n;
  const float coupled = p.input_forget ? 1.0f : 0.0f;
  const float clip = p.clip;
  for (int64_t j = 0; j < n; ++j) {
    const float c_prev = c[j];
    const float i = sigmoidf(clamp(xi[j] + hi[j] + pi[j] * c_prev, clip));
    const float f_own = sigmoidf(clamp(xf[j] + hf[j] + pf[j] * c_prev, clip));
    const float f = coupled * (1.0f - i) + (1.0f - coupled) * f_own;
    const float g = tanh_via_sigmoid(clamp(xc[j] + hc[j], clip));
    const float c_new = f * c_prev + i * g;
    // The output gate's peephole looks at the new cell state.
    const float o = sigmoidf(clamp(xo[j] + ho[j] + po[j] * c_new, clip));
    c[j] = c_new;
    h[j] = o * tanh_via_sigmoid(c_new);
  }
}

class LstmKernel final : public Kernel {
 public:
  LstmKernel(std::string where, const LstmAttributes& attrs, const LstmDims& dims,
             const LstmPresence& has, int workers)
      : where_(std::move(where)), attrs_(attrs), d_(dims), idx_(dims, attrs.layout), has_(has),
        no_peephole_(static_cast<size_t>(3 * dims.hidden), 0.0f), workers_(workers),
        small_(small(dims)),
        block_projection_(small_ ? dense_tap_gemm(projected_rows(std::min(kBlockRows, dims.batch)), gate_width(),
                                                  dims.input)
                                 : dense_tap_gemm(0, 0, 0)),
        last_projection_(small_ ? dense_tap_gemm(projected_rows(last_block_rows(dims)), gate_width(), dims.input)
                                : dense_tap_gemm(0, 0, 0)),
        block_step_(small_ ? dense_tap_gemm(std::min(kBlockRows, dims.batch), kGates * dims.hidden, dims.hidden)
                           : dense_tap_gemm(0, 0, 0)),
        last_step_(small_ ? dense_tap_gemm(last_block_rows(dims), kGates * dims.hidden, dims.hidden)
                          : dense_tap_gemm(0, 0, 0)) {}

  // Whether the GEMMs are TapGemms over batch blocks (Note [lstm batch blocks]), or sgemm.
  static bool small(const LstmDims& d) {
    const int64_t four_h = kGates * d.hidden;
    return d.input * d.num_dir * four_h <= kMaxTapWeights && d.hidden * four_h <= kMaxTapWeights;
  }
  static int64_t block_rows(const LstmDims& d) { return small(d) ? kBlockRows : std::max<int64_t>(d.batch, 1); }
  static int64_t blocks(const LstmDims& d) { return (d.batch + block_rows(d) - 1) / block_rows(d); }
  static int64_t last_block_rows(const LstmDims& d) { return d.batch - (blocks(d) - 1) * block_rows(d); }

  // The sum of the Buffers below.
  static size_t workspace_floats(const LstmDims& d) {
    const int64_t h = d.hidden, width = d.num_dir * kGates * h;
    const int64_t transposed = small(d) ? d.input * width + width + d.num_dir * h * kGates * h : 0;
    return static_cast<size_t>(d.seq * d.batch * width + d.batch * kGates * h + 2 * d.batch * h + transposed);
  }

  void run(const KernelArgs& args) const override {
    const int32_t* lens = has_.sequence_lens ? args.in<int32_t>(kLstmSequenceLens) : nullptr;
    check_sequence_lens(where_, lens, d_);
    const Buffers buf = buffers(args.workspace);
    input_projection(args, buf);
    for (int64_t dir = 0; dir < d_.num_dir; ++dir) run_direction(args, dir, lens, buf);
  }

 private:
  // The workspace, in this order (workspace_floats is their sum).
  struct Buffers {
    float* xw;     // [seq*batch, num_dir*4H]: X·W^T + biases, rows in X's order (x_row)
    float* gates;  // [batch, 4H]: H_{t-1}·R^T of the current step
    float* h;      // [batch, H]: hidden state of the current direction
    float* c;      // [batch, H]: cell state of the current direction
    // TapGemms only (small_), else empty:
    float* wt;     // [input, num_dir*4H]: W^T
    float* bias;   // [num_dir*4H]: Wb + Rb
    float* rt;     // [num_dir, H, 4H]: R^T per direction
  };
  Buffers buffers(void* workspace) const {
    const int64_t h = d_.hidden;
    Buffers buf;
    buf.xw = static_cast<float*>(workspace);
    buf.gates = buf.xw + d_.seq * d_.batch * gate_width();
    buf.h = buf.gates + d_.batch * kGates * h;
    buf.c = buf.h + d_.batch * h;
    buf.wt = buf.c + d_.batch * h;
    buf.bias = buf.wt + (small_ ? d_.input * gate_width() : 0);
    buf.rt = buf.bias + (small_ ? gate_width() : 0);
    return buf;
  }

  int64_t gate_width() const { return d_.num_dir * kGates * d_.hidden; }  // one row of xw
  int64_t length(const int32_t* lens, int64_t b) const { return lens ? lens[b] : d_.seq; }

  // to [cols, rows] = from [rows, cols]^T.
  static void transpose(const float* from, int64_t rows, int64_t cols, float* to) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) to[c * rows + r] = from[r * cols + c];
    }
  }

  // xw = X·W^T + Wb + Rb for every row of X and both directions: W [num_dir, 4H, I] is read as
  // one [num_dir*4H, I] matrix, so the biases [num_dir, 4H] line up with one row of xw, added
  // to every row by the epilogue. The panels of rows are split across the pool.
  void input_projection(const KernelArgs& args, const Buffers& buf) const {
    const int64_t rows = d_.seq * d_.batch;
    const int64_t width = gate_width();
    const int64_t four_h = kGates * d_.hidden;
    if (rows == 0 || width == 0) return;
    if (!small_) {
      sgemm_projection(args, buf.xw);
      return;
    }
    // TapGemms: W^T and the bias row here; each block projects its own rows (project_block).
    if (has_.b) {
      const float* b = args.in(kLstmB);  // [num_dir, 8H]: Wb (i, o, f, c) then Rb
      for (int64_t dir = 0; dir < d_.num_dir; ++dir) {
        const float* wb = b + dir * 2 * four_h;
        for (int64_t g = 0; g < four_h; ++g) buf.bias[dir * four_h + g] = wb[g] + wb[four_h + g];
      }
    }
    transpose(args.in(kLstmW), width, d_.input, buf.wt);
  }

  // The rows of xw a block projects at once: one step's (time-major X: they lie together per
  // step), or every step's (batch-major X: a block's rows lie together).
  int64_t projected_rows(int64_t block) const { return idx_.batch_major ? block * d_.seq : block; }

  // xw's rows of batch rows [first, first + rows), every step and both directions: inside the
  // block's job, so that they are still in cache for its steps and no job waits for another.
  void project_block(const KernelArgs& args, const Buffers& buf, int64_t first, bool last) const {
    const TapGemm& gemm = last ? last_projection_ : block_projection_;
    ConvEpilogue bias;
    bias.residual = has_.b ? buf.bias : nullptr;  // one row added to every row (ldz 0)
    const float* x = args.in(kLstmX);
    const int64_t width = gate_width();
    const int64_t calls = idx_.batch_major ? 1 : d_.seq;
    for (int64_t t = 0; t < calls; ++t) {
      const int64_t row = idx_.batch_major ? first * d_.seq : t * d_.batch + first;
      gemm.run(x + row * d_.input, buf.wt, bias, buf.xw + row * width, width, 0, 0, gemm.panels());
    }
  }

  // The same with sgemm, for an LSTM too large for TapGemms: row 0 gets the biases, every row a
  // copy, then the GEMM adds X·W^T (beta = 1).
  void sgemm_projection(const KernelArgs& args, float* xw) const {
    const int64_t rows = d_.seq * d_.batch;
    const int64_t width = gate_width();
    const int64_t four_h = kGates * d_.hidden;
    float beta = 0.0f;
    if (has_.b) {
      const float* bias = args.in(kLstmB);
      for (int64_t dir = 0; dir < d_.num_dir; ++dir) {
        const float* wb = bias + dir * 2 * four_h;
        for (int64_t g = 0; g < four_h; ++g) xw[dir * four_h + g] = wb[g] + wb[four_h + g];
      }
      for (int64_t r = 1; r < rows; ++r) std::memcpy(xw + r * width, xw, width * sizeof(float));
      beta = 1.0f;
    }
    if (d_.input == 0) {
      if (!has_.b) std::fill(xw, xw + rows * width, 0.0f);
      return;
    }
    sgemm(false, true, static_cast<int>(rows), static_cast<int>(width), static_cast<int>(d_.input), 1.0f,
          args.in(kLstmX), static_cast<int>(d_.input), args.in(kLstmW), static_cast<int>(d_.input), beta, xw,
          static_cast<int>(width));
  }

  void load_state(const KernelArgs& args, size_t input, int64_t dir, float* state) const {
    const bool present = input == kLstmInitialH ? has_.initial_h : has_.initial_c;
    idx_.load_state(present ? args.in(input) : nullptr, dir, state);
  }

  // A zero-length sequence ends in a zero state (as onnxruntime does), not in the initial one.
  void store_state(const float* state, const int32_t* lens, int64_t dir, float* out) const {
    const int64_t h = d_.hidden;
    for (int64_t b = 0; b < d_.batch; ++b) {
      float* row = out + idx_.state_offset(dir, b);
      if (length(lens, b) == 0) {
        std::fill(row, row + h, 0.0f);
      } else {
        std::memcpy(row, state + b * h, h * sizeof(float));
      }
    }
  }

  // What every block of one direction shares.
  struct Direction {
    int64_t dir = 0;
    bool reverse = false;
    int64_t steps = 0;
    CellParams cell;
    const float* rt = nullptr;  // [H, 4H] (TapGemms)
    const float* r = nullptr;   // [4H, H] (sgemm)
    float* y = nullptr;
  };

  void run_direction(const KernelArgs& args, int64_t dir, const int32_t* lens, const Buffers& buf) const {
    const int64_t h = d_.hidden;
    const int64_t four_h = kGates * h;
    load_state(args, kLstmInitialH, dir, buf.h);
    load_state(args, kLstmInitialC, dir, buf.c);

    Direction run;
    run.dir = dir;
    // The reverse pass of a bidirectional node is its second direction.
    run.reverse = attrs_.direction == LstmDirection::Reverse || dir == 1;
    run.cell.hidden = h;
    run.cell.clip = attrs_.has_clip ? attrs_.clip : std::numeric_limits<float>::infinity();
    run.cell.input_forget = attrs_.input_forget;
    run.cell.peephole = has_.p ? args.in(kLstmP) + dir * 3 * h : no_peephole_.data();
    run.r = args.in(kLstmR) + dir * four_h * h;  // R [4H, H]
    if (small_) {
      float* rt = buf.rt + dir * h * four_h;
      transpose(run.r, four_h, h, rt);
      run.rt = rt;
    }
    run.y = has_.y ? args.out(kLstmY) : nullptr;
    for (int64_t b = 0; b < d_.batch; ++b) run.steps = std::max(run.steps, length(lens, b));

    const int64_t count = blocks(d_);
    cpu_thread_pool().parallel_for(count, [&](int64_t begin, int64_t end, int) {
      for (int64_t blk = begin; blk < end; ++blk) {
        if (small_ && dir == 0) project_block(args, buf, blk * block_rows(d_), blk == count - 1);
        run_block(run, lens, buf, blk, blk == count - 1);
      }
    }, workers_);

    if (run.y) {
      // Y is zero past each sequence's length.
      for (int64_t b = 0; b < d_.batch; ++b) {
        for (int64_t t = length(lens, b); t < d_.seq; ++t) {
          float* row = run.y + idx_.y_offset(t, dir, b);
          std::fill(row, row + h, 0.0f);
        }
      }
    }
    if (has_.y_h) store_state(buf.h, lens, dir, args.out(kLstmYH));
    if (has_.y_c) store_state(buf.c, lens, dir, args.out(kLstmYC));
  }

  // Every step of batch rows [blk * block_rows, + the block's rows) of one direction.
  void run_block(const Direction& run, const int32_t* lens, const Buffers& buf, int64_t blk, bool last) const {
    const int64_t h = d_.hidden;
    const int64_t four_h = kGates * h;
    const int64_t first = blk * block_rows(d_);
    const int64_t rows = last ? last_block_rows(d_) : block_rows(d_);
    const TapGemm& step = last ? last_step_ : block_step_;
    float* gates = buf.gates + first * four_h;
    float* h_state = buf.h + first * h;
    float* c_state = buf.c + first * h;
    const ConvEpilogue none;
    // The plain cell in AVX2 code where the CPU has it (Note [lstm cell in avx2]).
    const bool plain = run.cell.peephole == no_peephole_.data() && !attrs_.has_clip && !attrs_.input_forget &&
                       lstm_cell_avx2_available();
    for (int64_t s = 0; s < run.steps; ++s) {
      // gates [rows, 4H] = H_{t-1} [rows, H] · R^T
      if (small_) {
        step.run(h_state, run.rt, none, gates, four_h);
      } else {
        sgemm(false, true, static_cast<int>(rows), static_cast<int>(four_h), static_cast<int>(h), 1.0f, h_state,
              static_cast<int>(h), run.r, static_cast<int>(h), 0.0f, gates, static_cast<int>(four_h));
      }
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t b = first + i;
        const int64_t len = length(lens, b);
        if (s >= len) continue;  // this sequence has ended: its state stays as it was
        // A reverse pass starts at each sequence's own last step.
        const int64_t t = run.reverse ? len - 1 - s : s;
        const float* xg = buf.xw + idx_.x_row(t, b) * gate_width() + run.dir * four_h;
        if (plain) {
          lstm_cell_avx2(h, xg, gates + i * four_h, c_state + i * h, h_state + i * h);
        } else {
          cell_step(run.cell, xg, gates + i * four_h, c_state + i * h, h_state + i * h);
        }
        if (run.y) std::memcpy(run.y + idx_.y_offset(t, run.dir, b), h_state + i * h, h * sizeof(float));
      }
    }
  }

  std::string where_;  // for errors about sequence_lens, found only at run time
  LstmAttributes attrs_;
  LstmDims d_;
  RnnLayoutIndex idx_;
  LstmPresence has_;
  std::vector<float> no_peephole_;  // [3H] zeros: the peephole terms of a node without P
  int workers_;                     // the most the blocks (and the projection's panels) are split across
  bool small_;                      // TapGemms over batch blocks, or sgemm over the whole batch
  TapGemm block_projection_;        // a block's rows of xw = X's rows · W^T [I, width] (projected_rows)
  TapGemm last_projection_;         // the same for the last block
  TapGemm block_step_;              // a block's gates [kBlockRows, 4H] = H [kBlockRows, H] · R^T
  TapGemm last_step_;               // the same for the last block's rows
};

KernelChoice plan_lstm(const Node& node, const std::vector<ValueInfo>& inputs,
                       const std::vector<TensorInfo>&) {
  const LstmAttributes attrs = parse_lstm_attributes(node);
  const LstmDims dims = lstm_dims(node, attrs, inputs);
  auto in = [&](size_t i) { return i < inputs.size() && inputs[i].present; };
  LstmPresence has;
  has.b = in(kLstmB);
  has.sequence_lens = in(kLstmSequenceLens);
  has.initial_h = in(kLstmInitialH);
  has.initial_c = in(kLstmInitialC);
  has.p = in(kLstmP);
  has.y = node.has_output(kLstmY);
  has.y_h = node.has_output(kLstmYH);
  has.y_c = node.has_output(kLstmYC);

  // Split the blocks across the pool's threads (Note [lstm batch blocks]); each block's work is
  // its steps' GEMMs.
  const int workers = plan_workers(LstmKernel::blocks(dims), dims.seq * LstmKernel::block_rows(dims) *
                                                                 kGates * dims.hidden * dims.hidden);
  KernelChoice choice;
  choice.kernel = std::make_unique<LstmKernel>(node.where(), attrs, dims, has, workers);
  choice.algorithm = with_threads("gemm+gates", workers);
  choice.workspace_bytes = LstmKernel::workspace_floats(dims) * sizeof(float);
  return choice;
}

}  // namespace

void register_cpu_lstm_kernels(KernelRegistry& r) { r.add("LSTM", plan_lstm); }

}  // namespace dnnx
