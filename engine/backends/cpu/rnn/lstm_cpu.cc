// LSTM on the CPU: X·W^T plus both biases for every time step and direction (one sgemm); then,
// per direction, block of batch rows and step, H_prev·R^T for the block and the gate math (ONNX
// gate order i, o, f, c throughout). The step products, by the plan's algorithm:
// - "dot+gates": dot products over R as the node gives it (Note [recurrent dot product]), for
//   batches below kTapRows (batch 1: a matrix-vector product per step);
// - "panels+gates": at batch 1, a constant R^T packed at plan time (Note [recurrent panels]);
// - "tap+gates": TapGemms (conv/tap_gemm_cpu.h) over R^T, transposed once per call, for batches
//   of kTapRows or more whose R^T fits L2; where W is not packed and W^T fits as well, each step's
//   X_t·W^T + biases comes from a TapGemm of its block too, not from one sgemm over every step
//   ("tap x·W^T, tap+gates", Note [lstm step projection]);
// - "gemm+gates": OpenBLAS's sgemm over the whole batch, for a batch above kBlockRows of an LSTM
//   whose R is above kMaxDotWeights: a real GEMM there, which OpenBLAS's packing pays for.
//
// Note [lstm batch blocks]
// Batch rows never meet in an LSTM, and neither do the directions, so each block of kBlockRows
// rows of each direction runs its whole sequence on its own, and the (direction, block) jobs
// are split across the CPU thread pool: at batch 1 a bidirectional layer's two directions run
// on two threads, and no thread waits for another between steps. Where fewer jobs than threads
// would leave a thread idle (one direction at batch 16 on 2 threads), the blocks are smaller, down
// to kTapRows rows. Neither product's sums depend on the rows around them, so the results are the
// same for any thread count and block. zoo2's conv-LSTM (hidden 128, one direction) at batch 16
// on 2 threads, the whole model: one block of 16 rows 2.70-3.89 ms a call (three runs, this
// 2-core Zen 4), two of 8 2.40-3.34 (onnxruntime ~1.9; bench/RESULTS.md, "CPU recurrent models").
// W and R are packed at plan time only where they are constants that no trainer changes (Note
// [lstm projection], Note [recurrent panels]); otherwise a fine-tuning step's update of W or R
// is read by the next call.
// Measured on the zoo's bidirectional LSTM classifier at batch 1 (2 layers, 50 steps, hidden
// 128; bench/RESULTS.md of 2026-12-05, git log -p): before, TapGemms over W^T and R^T transposed
// per call by a plain loop (400+ us for R [512, 128]: a 2 KB store stride), and OpenBLAS's
// sgemm per step in layer 2 (W too large for a TapGemm) took 2.0 ms on 1 thread against
// onnxruntime's 0.95; now ~1.15 against ~0.85.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <limits>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/dense/blas.h"
#include "backends/cpu/conv/conv_nhwc_cpu.h"
#include "backends/cpu/conv/tap_gemm_cpu.h"
#include "backends/cpu/rnn/lstm_cell_avx2_cpu.h"
#include "backends/cpu/rnn/lstm_cell_cpu.h"
#include "backends/cpu/rnn/recurrent_panels_cpu.h"
#include "backends/cpu/rnn/recurrent_product_cpu.h"
#include "backends/cpu/rnn/rnn_layout_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "runtime/kernel_registry.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx {

namespace {

constexpr int64_t kGates = 4;  // i, o, f, c
constexpr int64_t kBlockRows = 16;  // batch rows a block runs together (Note [lstm batch blocks])
// R [4H, H] up to 1 MB: at any batch its dot products beat OpenBLAS's sgemm, which packs R on
// every step. Past it, a batch above kBlockRows runs sgemm over the whole batch at once.
constexpr int64_t kMaxDotWeights = int64_t{1} << 18;
// A projection of at most kFewRows rows of X runs its sgemm in at most 2 blocks of columns (one
// per direction, for 2 threads): each block repacks X, which 12 blocks of the zoo's LSTM
// classifier at batch 1 (X [50, 256], W [1024, 256]) did 12 times.
constexpr int64_t kFewRows = 256;
// A batch of kTapRows or more over kTapSteps steps or more, with R^T in 256 KB (L2), takes its
// step products from TapGemms over R^T, transposed once per call (Note [lstm batch blocks]).
constexpr int64_t kTapRows = 4;
constexpr int64_t kTapSteps = 4;
constexpr int64_t kMaxTapWeights = int64_t{1} << 16;

// Note [lstm step projection]
// In a tap plan (small R^T) whose W is not packed (Note [lstm projection]: an input narrower than
// kMinPackedInput, or a W that trainers change) the projection X·W^T of every step was one sgemm:
// a K = input product (28 for the MNIST rows LSTM) that OpenBLAS runs far below its rate, into
// a [seq*batch, 4H] buffer (1.6 MB there) first filled with the biases row by row, all on the
// calling thread but the sgemm's own split. It took a quarter of the layer at 1 thread and a
// third at 2. Where W^T [I, 4H] fits beside R^T (kMaxTapWeights), each block computes its rows'
// X_t·W^T + Wb + Rb at each step instead, by a TapGemm over W^T (transposed once per call) with
// the biases as its epilogue, into a [rows, 4H] slice that stays in L1: the projection splits
// across the threads with the blocks, and the big buffer, its fill and its copies are gone. The
// sums per output are (X_t·W^T + b) + H·R^T in that order, as before, each over k in order.
// Rows whose sequence has ended (sequence_lens), layout 1 and reverse passes with lengths are
// gathered into a [rows, I] slice first; layout 0 without lengths reads X's rows where they lie.
// Measured on the MNIST rows LSTM (batch 128, hidden 28, 28 steps; a 2-core Zen 4 EPYC, one
// process, both plans and onnxruntime taking turns, medians of 200 calls, three runs): 2 threads
// 743, 743, 788 -> 710, 680, 694 us (onnxruntime 669-724); 1 thread within the machine's noise
// (1197 -> 1197, 984 -> 932, 1081 -> 1323: the projection was near the core's FMA rate either way).
// A packed W stays ahead of it: zoo2's conv-LSTM (input 64) at batch 16, 1 thread, 3.27 ms packed
// against 3.48 by the blocks, so the blocks project only where sgemm would.

// Which optional inputs and outputs the node has (fixed at plan time: the call's pointer arrays
// are only as long as the node's input and output lists).
struct LstmPresence {
  bool b = false, sequence_lens = false, initial_h = false, initial_c = false, p = false;
  bool y = false, y_h = false, y_c = false;
};

// How a plan cuts the batch (Note [lstm batch blocks]) and where its X·W^T comes from.
struct LstmBlocks {
  int64_t rows = kBlockRows;  // batch rows a block runs together
  bool step_projection = false;  // each block's steps compute their X_t·W^T + b (Note [lstm step projection])
  int64_t count(int64_t batch) const { return (batch + rows - 1) / rows; }
  int64_t last_rows(int64_t batch) const { return batch - (count(batch) - 1) * rows; }
  // The step products' tile (Note [lstm step panels]): the most 8-wide vectors both block
  // heights take, and the panels' width.
  int panel_vectors(int64_t batch) const {
    return std::min(TapGemm::max_vectors(rows), TapGemm::max_vectors(std::max<int64_t>(1, last_rows(batch))));
  }
  int64_t panel_width(int64_t batch) const { return 8 * panel_vectors(batch); }
};

class LstmKernel final : public Kernel {
 public:
  // constant_r: R [num_dir, 4H, H] where it is a constant that no trainer changes, else null
  // (Note [recurrent panels]); projection: X·W^T on W packed at plan time, or null (sgemm, or
  // the blocks' own with blocks.step_projection).
  LstmKernel(std::string where, const LstmAttributes& attrs, const LstmDims& dims, const LstmPresence& has,
             int workers, const LstmBlocks& blocks, const float* constant_r, PackedProduct projection)
      : where_(std::move(where)), attrs_(attrs), d_(dims), idx_(dims, attrs.layout), has_(has),
        no_peephole_(static_cast<size_t>(3 * dims.hidden), 0.0f), workers_(workers), dot_(dot(dims)),
        tap_(tap(dims)), blocks_(blocks),
        block_step_(panel_tap_gemm(tap_ ? blocks.rows : 0, kGates * dims.hidden, dims.hidden,
                                   blocks.panel_vectors(dims.batch))),
        last_step_(panel_tap_gemm(tap_ ? blocks.last_rows(dims.batch) : 0, kGates * dims.hidden, dims.hidden,
                                  blocks.panel_vectors(dims.batch))),
        x_block_step_(dense_tap_gemm(blocks.step_projection ? blocks.rows : 0, kGates * dims.hidden, dims.input)),
        x_last_step_(dense_tap_gemm(blocks.step_projection ? blocks.last_rows(dims.batch) : 0, kGates * dims.hidden,
                                    dims.input)),
        projection_(std::move(projection.kernel)), projection_bytes_(projection.workspace_bytes) {
    if (constant_r && panels(dims)) {
      const int64_t four_h = kGates * dims.hidden;
      for (int64_t dir = 0; dir < dims.num_dir; ++dir)
        panels_[dir] = RecurrentPanels(four_h, dims.hidden, constant_r + dir * four_h * dims.hidden);
    }
  }

  // Whether the products are dot products over batch blocks (Note [lstm batch blocks]), or sgemm.
  static bool dot(const LstmDims& d) { return d.batch <= kBlockRows || d.hidden * kGates * d.hidden <= kMaxDotWeights; }
  // The rows of a block for `threads` threads: kBlockRows, or fewer (kTapRows at least) where the
  // (direction, block) jobs would leave a thread idle (Note [lstm batch blocks]); sgemm's one
  // block is the whole batch.
  static int64_t block_rows(const LstmDims& d, int64_t threads) {
    if (!dot(d)) return std::max<int64_t>(d.batch, 1);
    const int64_t per_direction = (threads + d.num_dir - 1) / d.num_dir;  // blocks each direction needs
    const int64_t rows = (d.batch + per_direction - 1) / per_direction;
    return std::max(kTapRows, std::min(kBlockRows, rows));
  }
  // Whether the dot products' steps are TapGemms over R^T (kTapRows).
  static bool tap(const LstmDims& d) {
    return dot(d) && d.batch >= kTapRows && d.seq >= kTapSteps && d.hidden * kGates * d.hidden <= kMaxTapWeights;
  }
  // Whether a tap plan's blocks may compute their steps' X_t·W^T + b (Note [lstm step
  // projection]); they do where W is not packed.
  static bool step_projection(const LstmDims& d) {
    return tap(d) && d.input > 0 && d.input * kGates * d.hidden <= kMaxTapWeights;
  }

  // Whether a constant R's steps run on its packed panels: batch 1 (a matrix-vector product per
  // step) on a CPU with AVX-512 (Note [recurrent panels]).
  static bool panels(const LstmDims& d) { return d.batch == 1 && dot(d) && recurrent_panels_available(); }

  // The sum of the Buffers below.
  static size_t workspace_floats(const LstmDims& d, const LstmBlocks& blocks) {
    const int64_t h = d.hidden, width = d.num_dir * kGates * h;
    const bool step_x = blocks.step_projection;
    // R^T, then its panels (Note [lstm step panels])
    const int64_t rt_panels = tap_panel_floats(kGates * h, h, blocks.panel_width(d.batch));
    const int64_t rt = tap(d) ? d.num_dir * (h * kGates * h + rt_panels) : 0;
    const int64_t xw = step_x ? d.batch * width : d.seq * d.batch * width;
    const int64_t wt_and_rows = step_x ? d.num_dir * d.input * (kGates * h + d.batch) : 0;
    return static_cast<size_t>(xw + d.num_dir * d.batch * (kGates * h + 2 * h) + rt + wt_and_rows + width);
  }
  // The workspace: the Buffers, then (packed projection) its own workspace, 64-byte aligned.
  size_t workspace_bytes() const { return projection_offset() + projection_bytes_; }
  bool packed_projection() const { return projection_ != nullptr; }
  bool packed_steps() const { return !panels_[0].empty(); }

  void run(const KernelArgs& args) const override {
    const int32_t* lens = has_.sequence_lens ? args.in<int32_t>(kLstmSequenceLens) : nullptr;
    check_sequence_lens(where_, lens, d_);
    const Buffers buf = buffers(args.workspace);
    if (blocks_.step_projection) {
      if (has_.b) sum_biases(args.in(kLstmB), buf.bias);  // the blocks' products add them
    } else if (projection_) {
      packed_projection(args, buf);
    } else {
      sgemm_projection(args, buf.xw);
    }
    Direction dirs[2];  // num_dir <= 2; nothing allocated per call
    for (int64_t dir = 0; dir < d_.num_dir; ++dir) dirs[dir] = direction(args, dir, lens, buf);
    if (dot_) {
      // Every (direction, block) on its own (Note [lstm batch blocks]).
      const int64_t count = blocks_.count(d_.batch);
      cpu_thread_pool().parallel_for(d_.num_dir * count, [&](int64_t begin, int64_t end, int) {
        for (int64_t job = begin; job < end; ++job) {
          const Direction& run = dirs[job / count];
          run_block(run, lens, job % count);
        }
      }, workers_);
    } else {
      // One block, the whole batch: sgemm's own split across the pool does the threading.
      for (int64_t dir = 0; dir < d_.num_dir; ++dir) run_block(dirs[dir], lens, 0);
    }
    for (int64_t dir = 0; dir < d_.num_dir; ++dir) finish_direction(args, dirs[dir], lens);
  }

 private:
  // The workspace, in this order (workspace_floats is their sum).
  struct Buffers {
    // [seq*batch, num_dir*4H]: X·W^T + biases, rows in X's order (x_row); with the step
    // projection [num_dir, batch, 4H]: the current step's (Note [lstm step projection])
    float* xw;
    float* gates;  // [num_dir, batch, 4H]: H_{t-1}·R^T of the current step
    float* h;      // [num_dir, batch, H]: hidden state
    float* c;      // [num_dir, batch, H]: cell state
    float* rt;     // [num_dir, H, 4H]: R^T (TapGemms only, else empty)
    float* rt_panels;  // [num_dir, tap_panel_floats]: R^T in the step products' panels (Note [lstm step panels])
    float* wt;     // [num_dir, I, 4H]: W^T (step projection only, else empty)
    float* x_rows; // [num_dir, batch, I]: the step's rows of X, gathered (step projection only)
    float* bias;   // [num_dir*4H]: Wb + Rb, the packed or step projection's bias
  };
  size_t projection_offset() const { return (workspace_floats(d_, blocks_) * sizeof(float) + 63) / 64 * 64; }
  Buffers buffers(void* workspace) const {
    const int64_t h = d_.hidden, n = d_.num_dir * d_.batch;
    Buffers buf;
    buf.xw = static_cast<float*>(workspace);
    buf.gates = buf.xw + (blocks_.step_projection ? 1 : d_.seq) * d_.batch * gate_width();
    buf.h = buf.gates + n * kGates * h;
    buf.c = buf.h + n * h;
    buf.rt = buf.c + n * h;
    buf.rt_panels = buf.rt + (tap_ ? d_.num_dir * h * kGates * h : 0);
    buf.wt = buf.rt_panels + (tap_ ? d_.num_dir * rt_panel_floats() : 0);
    buf.x_rows = buf.wt + (blocks_.step_projection ? d_.num_dir * d_.input * kGates * h : 0);
    buf.bias = buf.x_rows + (blocks_.step_projection ? n * d_.input : 0);
    return buf;
  }

  int64_t gate_width() const { return d_.num_dir * kGates * d_.hidden; }  // one row of xw
  int64_t rt_panel_floats() const {
    return tap_panel_floats(kGates * d_.hidden, d_.hidden, blocks_.panel_width(d_.batch));
  }
  int64_t length(const int32_t* lens, int64_t b) const { return lens ? lens[b] : d_.seq; }

  // What every block of one direction shares.
  struct Direction {
    int64_t dir = 0;
    bool reverse = false;
    int64_t steps = 0;
    CellParams cell;
    const float* w = nullptr;     // [4H, I]
    const float* r = nullptr;     // [4H, H]
    const float* rt = nullptr;    // R^T [H, 4H] in panels (TapGemms: Note [lstm step panels])
    const float* bias = nullptr;  // [8H]: Wb then Rb, or null
    // Step projection (Note [lstm step projection]): X, W^T [I, 4H], the gathered rows [batch, I]
    // and Wb + Rb [4H] (null without B).
    const float* x = nullptr;
    const float* wt = nullptr;
    float* x_rows = nullptr;
    const float* bias_sum = nullptr;
    // This direction's columns of xw (row stride gate_width()); with the step projection, its
    // [batch, 4H] of the current step.
    float* xw = nullptr;
    float* gates = nullptr;       // [batch, 4H]
    float* h = nullptr;           // [batch, H]
    float* c = nullptr;           // [batch, H]
    float* y = nullptr;
    bool plain = false;           // the AVX2 cell (Note [lstm cell in avx2])
    const RecurrentPanels* panels = nullptr;  // R^T packed at plan time (Note [recurrent panels])
  };

  Direction direction(const KernelArgs& args, int64_t dir, const int32_t* lens, const Buffers& buf) const {
    const int64_t h = d_.hidden;
    const int64_t four_h = kGates * h;
    Direction run;
    run.dir = dir;
    // The reverse pass of a bidirectional node is its second direction.
    run.reverse = attrs_.direction == LstmDirection::Reverse || dir == 1;
    run.cell.hidden = h;
    run.cell.clip = attrs_.has_clip ? attrs_.clip : std::numeric_limits<float>::infinity();
    run.cell.input_forget = attrs_.input_forget;
    run.cell.peephole = has_.p ? args.in(kLstmP) + dir * 3 * h : no_peephole_.data();
    run.w = args.in(kLstmW) + dir * four_h * d_.input;
    run.r = args.in(kLstmR) + dir * four_h * h;
    if (!panels_[dir].empty()) run.panels = &panels_[dir];
    if (tap_) {
      float* rt = buf.rt + dir * h * four_h;
      recurrent_transpose(four_h, h, run.r, rt);
      float* panels = buf.rt_panels + dir * rt_panel_floats();
      pack_tap_panels(rt, four_h, h, blocks_.panel_width(d_.batch), panels);
      run.rt = panels;
    }
    run.bias = has_.b ? args.in(kLstmB) + dir * 2 * four_h : nullptr;
    run.xw = buf.xw + dir * four_h;
    if (blocks_.step_projection) {
      float* wt = buf.wt + dir * d_.input * four_h;
      recurrent_transpose(four_h, d_.input, run.w, wt);
      run.wt = wt;
      run.x = args.in(kLstmX);
      run.x_rows = buf.x_rows + dir * d_.batch * d_.input;
      run.bias_sum = has_.b ? buf.bias + dir * four_h : nullptr;
      run.xw = buf.xw + dir * d_.batch * four_h;
    }
    run.gates = buf.gates + dir * d_.batch * four_h;
    run.h = buf.h + dir * d_.batch * h;
    run.c = buf.c + dir * d_.batch * h;
    run.y = has_.y ? args.out(kLstmY) : nullptr;
    for (int64_t b = 0; b < d_.batch; ++b) run.steps = std::max(run.steps, length(lens, b));
    run.plain = !has_.p && !attrs_.has_clip && !attrs_.input_forget && lstm_cell_avx2_available();
    idx_.load_state(has_.initial_h ? args.in(kLstmInitialH) : nullptr, dir, run.h);
    idx_.load_state(has_.initial_c ? args.in(kLstmInitialC) : nullptr, dir, run.c);
    return run;
  }

  // xw = X·W^T + Wb + Rb, every row of X and both directions at once, by OpenBLAS's sgemm (split
  // across the pool in thread-independent blocks, Note [thread-independent gemm blocks]): row 0
  // gets the biases, every row a copy, then the GEMM adds X·W^T (beta = 1). W [num_dir, 4H, I]
  // is read as one [num_dir*4H, I] matrix. (Dot products over W, per block, ran at half
  // sgemm's rate on the zoo's LSTM classifier: X's 50 rows against 1024 of W.)
  void sgemm_projection(const KernelArgs& args, float* xw) const {
    const int64_t rows = d_.seq * d_.batch;
    const int64_t width = gate_width();
    const int64_t four_h = kGates * d_.hidden;
    if (rows == 0 || width == 0) return;
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
          static_cast<int>(width), rows <= kFewRows ? 2 : 64);
  }

  // xw = X·W^T + Wb + Rb on the tiles of W packed at plan time (Note [packed product] in
  // conv/conv_nhwc_cpu.cc; Note [lstm projection]): X [seq*batch, I] as the product's A, the
  // biases summed into buf.bias as its bias [num_dir*4H].
  void packed_projection(const KernelArgs& args, const Buffers& buf) const {
    if (has_.b) sum_biases(args.in(kLstmB), buf.bias);
    const void* inputs[3] = {args.in(kLstmX), nullptr, has_.b ? buf.bias : nullptr};
    void* outputs[1] = {buf.xw};
    KernelArgs inner{inputs, outputs, static_cast<char*>(args.workspace) + projection_offset()};
    projection_->run(inner);
  }

  // sums [num_dir*4H] = Wb + Rb of each direction, from B [num_dir, 8H].
  void sum_biases(const float* b, float* sums) const {
    const int64_t four_h = kGates * d_.hidden;
    for (int64_t dir = 0; dir < d_.num_dir; ++dir) {
      const float* wb = b + dir * 2 * four_h;
      for (int64_t g = 0; g < four_h; ++g) sums[dir * four_h + g] = wb[g] + wb[four_h + g];
    }
  }

  // The block's rows of X at step s, [rows, I] (Note [lstm step projection]): where they lie in
  // X (layout 0, no sequence_lens), else gathered; a row whose sequence has ended reads zeros.
  const float* step_rows(const Direction& run, const int32_t* lens, int64_t first, int64_t rows, int64_t s) const {
    const int64_t input = d_.input;
    if (!lens && !idx_.batch_major) return run.x + idx_.x_row(run.reverse ? d_.seq - 1 - s : s, first) * input;
    float* dst = run.x_rows + first * input;
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t b = first + i, len = length(lens, b);
      float* row = dst + i * input;
      if (s >= len) {
        std::fill(row, row + input, 0.0f);
      } else {
        std::memcpy(row, run.x + idx_.x_row(run.reverse ? len - 1 - s : s, b) * input, input * sizeof(float));
      }
    }
    return dst;
  }

  // Every step of batch rows [blk * block_rows, + the block's rows) of one direction.
  void run_block(const Direction& run, const int32_t* lens, int64_t blk) const {
    const int64_t h = d_.hidden;
    const int64_t four_h = kGates * h;
    const int64_t first = blk * blocks_.rows;
    const int64_t rows = std::min(blocks_.rows, d_.batch - first);
    float* gates = run.gates + first * four_h;
    float* h_state = run.h + first * h;
    float* c_state = run.c + first * h;
    const int64_t width = gate_width();
    const bool last = first + rows == d_.batch;
    float* xg_block = run.xw + first * four_h;  // step projection: this block's X_t·W^T + b
    ConvEpilogue bias_row;
    bias_row.residual = run.bias_sum;  // one row (ldz 0): a bias per column
    for (int64_t s = 0; s < run.steps; ++s) {
      if (blocks_.step_projection) {  // xg [rows, 4H] = X_t [rows, I] · W^T + b (Note [lstm step projection])
        const TapGemm& product = last ? x_last_step_ : x_block_step_;
        product.run(step_rows(run, lens, first, rows, s), run.wt, bias_row, xg_block, four_h, 0, 0, product.panels());
      }
      // gates [rows, 4H] = H_{t-1} [rows, H] · R^T
      if (run.panels) {
        run.panels->product(h_state, gates);  // batch 1
      } else if (tap_) {
        (last ? last_step_ : block_step_).run(h_state, run.rt, ConvEpilogue(), gates, four_h);
      } else if (dot_) {
        recurrent_product(rows, four_h, h, h_state, h, run.r, gates, four_h);
      } else if (h == 0) {
        std::fill(gates, gates + rows * four_h, 0.0f);
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
        const float* xg = blocks_.step_projection ? xg_block + i * four_h : run.xw + idx_.x_row(t, b) * width;
        if (run.plain) {
          lstm_cell_avx2(h, xg, gates + i * four_h, c_state + i * h, h_state + i * h);
        } else {
          cell_step(run.cell, xg, gates + i * four_h, c_state + i * h, h_state + i * h);
        }
        if (run.y) std::memcpy(run.y + idx_.y_offset(t, run.dir, b), h_state + i * h, h * sizeof(float));
      }
    }
  }

  // Y's zeros past each sequence's length, and Y_h, Y_c.
  void finish_direction(const KernelArgs& args, const Direction& run, const int32_t* lens) const {
    const int64_t h = d_.hidden;
    if (run.y) {
      for (int64_t b = 0; b < d_.batch; ++b) {
        for (int64_t t = length(lens, b); t < d_.seq; ++t) {
          float* row = run.y + idx_.y_offset(t, run.dir, b);
          std::fill(row, row + h, 0.0f);
        }
      }
    }
    if (has_.y_h) store_state(run.h, lens, run.dir, args.out(kLstmYH));
    if (has_.y_c) store_state(run.c, lens, run.dir, args.out(kLstmYC));
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

  std::string where_;  // for errors about sequence_lens, found only at run time
  LstmAttributes attrs_;
  LstmDims d_;
  RnnLayoutIndex idx_;
  LstmPresence has_;
  std::vector<float> no_peephole_;  // [3H] zeros: the peephole terms of a node without P
  int workers_;                     // the most the (direction, block) jobs are split across
  bool dot_;                        // dot products over batch blocks, or sgemm over the whole batch
  bool tap_;                        // the blocks' steps as TapGemms over R^T instead of dot products
  LstmBlocks blocks_;               // rows per block; whether they compute their X_t·W^T + b too
  TapGemm block_step_;              // a block's gates [rows, 4H] = H [rows, H] · R^T
  TapGemm last_step_;               // the same for the last block's rows
  TapGemm x_block_step_;            // a block's xg [rows, 4H] = X_t [rows, I] · W^T + b
  TapGemm x_last_step_;             // the same for the last block's rows
  std::unique_ptr<Kernel> projection_;  // X·W^T on W packed at plan time, or null: sgemm
  size_t projection_bytes_;             // its workspace
  RecurrentPanels panels_[2];           // per direction, R^T packed at plan time, or empty
};

// Note [lstm step panels]
// A tap plan's step product H [rows, H] · R^T reads R^T from the panels of Note [tap panels]
// (tap_gemm_cpu.cc), packed per call after the transpose (R may be an input, or trained): each
// tile streams its columns' K rows instead of loading 96 bytes every 4H floats. The sums are
// the same, in the same order. One LSTM node, panels against R^T as it lies, one process taking
// turns, medians of 600 calls (this 2-core Zen 4): seq 50, batch 16, input 64, hidden 128 1.961
// -> 1.876 ms (2 threads 1.464 -> 1.339), batch 64 11.06 -> 10.27, bidirectional with input 256
// 8.34 -> 8.19, hidden 96 1.555 -> 1.522; hidden 28 (R^T in L1) 0.935 -> 0.940.

// Note [lstm projection]
// X·W^T for every step at once is an ordinary GEMM, [seq*batch, I] x [I, num_dir*4H], and
// OpenBLAS's sgemm packs W on every call: on the zoo's bidirectional LSTM classifier (batch 1,
// layer 2: [50, 256] x [256, 1024]) the copy of W took a third of the product's time. Where W is
// a constant that no trainer changes (Note [mutable constants]) and the packed tiles take the
// product (Note [packed product]), W is packed once at plan time and the product runs on the
// tiles, with Wb + Rb as their bias (summed per call: B may be an input). Inputs narrower than
// kMinPackedInput keep sgemm, which measured faster there (1 thread, this Xeon): [3584, 28] x
// [28, 112] (the MNIST rows LSTM at batch 128) 0.177 ms against 0.205 on the tiles, [512, 28] x
// [28, 512] 0.096 against 0.104; from 40 inputs the tiles win: [50, 40] x [40, 1024] 0.043 ->
// 0.030, [120, 64] x [64, 512] 0.058 -> 0.045, [50, 256] x [256, 1024] 0.29 -> 0.16.
// (kMinPackedInput: plan_recurrent_projection in recurrent_panels_cpu.cc.)
PackedProduct plan_projection(const LstmDims& d, const std::vector<ValueInfo>& inputs, bool has_b) {
  // W [num_dir, 4H, I] is one [num_dir*4H, I] matrix: B as [N, K].
  return plan_recurrent_projection(d.seq * d.batch, d.input, d.num_dir * kGates * d.hidden, inputs[kLstmW], has_b);
}

// R for the panels (Note [recurrent panels]), or null.
const float* constant_r(const std::vector<ValueInfo>& inputs) { return recurrent_constant_weights(inputs[kLstmR]); }

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

  // Split the (direction, block) jobs across the pool's threads (Note [lstm batch blocks]); each
  // job's work is its rows' projection and steps.
  const bool dot = LstmKernel::dot(dims);
  LstmBlocks blocks;
  blocks.rows = LstmKernel::block_rows(dims, cpu_threads());
  const int64_t jobs = dot ? dims.num_dir * blocks.count(dims.batch) : 1;
  const int workers = plan_workers(jobs, dims.seq * std::min(blocks.rows, dims.batch) * kGates * dims.hidden *
                                             (dims.hidden + dims.input));
  // X·W^T: on W packed at plan time where it can be, else by the blocks of a tap plan, else sgemm.
  PackedProduct packed = plan_projection(dims, inputs, has.b);
  blocks.step_projection = !packed.kernel && LstmKernel::step_projection(dims);
  KernelChoice choice;
  auto kernel = std::make_unique<LstmKernel>(node.where(), attrs, dims, has, workers, blocks, constant_r(inputs),
                                             std::move(packed));
  std::string steps = LstmKernel::tap(dims) ? "tap+gates" : dot ? "dot+gates" : "gemm+gates";
  if (kernel->packed_steps()) steps = "panels+gates";
  const std::string projection = blocks.step_projection ? "tap x·W^T, "
                                 : kernel->packed_projection() ? "packed x·W^T, " : "";
  choice.algorithm = with_threads(projection + steps, workers);
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cpu_lstm_kernels(KernelRegistry& r) { r.add("LSTM", plan_lstm); }

}  // namespace dnnx
