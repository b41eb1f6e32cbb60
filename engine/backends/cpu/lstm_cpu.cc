// LSTM on the CPU ("gemm+gates"): one GEMM computes X·W^T plus both biases for every time step
// and direction at once; then, per direction and step, one GEMM computes H_prev·R^T for the
// whole batch and a plain loop does the gate math (ONNX gate order i, o, f, c throughout).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <limits>

#include "backends/cpu/activation_cpu.h"
#include "backends/cpu/blas.h"
#include "backends/cpu/rnn_layout_cpu.h"
#include "runtime/kernel_registry.h"
#include "ops/lstm_attrs.h"

namespace dnnx {

namespace {

constexpr int64_t kGates = 4;  // i, o, f, c

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
             const LstmPresence& has)
      : where_(std::move(where)), attrs_(attrs), d_(dims), idx_(dims, attrs.layout), has_(has),
        no_peephole_(static_cast<size_t>(3 * dims.hidden), 0.0f) {}

  // The sum of the Buffers below.
  static size_t workspace_floats(const LstmDims& d) {
    const int64_t h = d.hidden;
    return static_cast<size_t>(d.seq * d.batch * d.num_dir * kGates * h + d.batch * kGates * h +
                               2 * d.batch * h);
  }

  void run(const KernelArgs& args) const override {
    const int32_t* lens = has_.sequence_lens ? args.in<int32_t>(kLstmSequenceLens) : nullptr;
    check_sequence_lens(where_, lens, d_);
    const Buffers buf = buffers(args.workspace);
    input_projection(args, buf.xw);
    for (int64_t dir = 0; dir < d_.num_dir; ++dir) run_direction(args, dir, lens, buf);
  }

 private:
  // The workspace, in this order (workspace_floats is their sum).
  struct Buffers {
    float* xw;     // [seq*batch, num_dir*4H]: X·W^T + biases, rows in X's order (x_row)
    float* gates;  // [batch, 4H]: H_{t-1}·R^T of the current step
    float* h;      // [batch, H]: hidden state of the current direction
    float* c;      // [batch, H]: cell state of the current direction
  };
  Buffers buffers(void* workspace) const {
    Buffers buf;
    buf.xw = static_cast<float*>(workspace);
    buf.gates = buf.xw + d_.seq * d_.batch * gate_width();
    buf.h = buf.gates + d_.batch * kGates * d_.hidden;
    buf.c = buf.h + d_.batch * d_.hidden;
    return buf;
  }

  int64_t gate_width() const { return d_.num_dir * kGates * d_.hidden; }  // one row of xw
  int64_t length(const int32_t* lens, int64_t b) const { return lens ? lens[b] : d_.seq; }

  // xw = X·W^T + Wb + Rb for every row of X and both directions: W [num_dir, 4H, I] is read as
  // one [num_dir*4H, I] matrix, so the biases [num_dir, 4H] line up with one row of xw.
  void input_projection(const KernelArgs& args, float* xw) const {
    const int64_t rows = d_.seq * d_.batch;
    const int64_t width = gate_width();
    const int64_t four_h = kGates * d_.hidden;
    if (rows == 0) return;
    float beta = 0.0f;
    if (has_.b) {
      const float* bias = args.in(kLstmB);  // [num_dir, 8H]: Wb (i, o, f, c) then Rb
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
    sgemm(false, true, static_cast<int>(rows), static_cast<int>(width), static_cast<int>(d_.input),
          1.0f, args.in(kLstmX), static_cast<int>(d_.input), args.in(kLstmW),
          static_cast<int>(d_.input), beta, xw, static_cast<int>(width));
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

  void run_direction(const KernelArgs& args, int64_t dir, const int32_t* lens, const Buffers& buf) const {
    const int64_t h = d_.hidden;
    const int64_t four_h = kGates * h;
    const float* xw = buf.xw;
    float* gates = buf.gates;
    float* h_state = buf.h;
    float* c_state = buf.c;
    load_state(args, kLstmInitialH, dir, h_state);
    load_state(args, kLstmInitialC, dir, c_state);

    // The reverse pass of a bidirectional node is its second direction.
    const bool reverse = attrs_.direction == LstmDirection::Reverse || dir == 1;
    CellParams cell;
    cell.hidden = h;
    cell.clip = attrs_.has_clip ? attrs_.clip : std::numeric_limits<float>::infinity();
    cell.input_forget = attrs_.input_forget;
    cell.peephole = has_.p ? args.in(kLstmP) + dir * 3 * h : no_peephole_.data();
    const float* r = args.in(kLstmR) + dir * four_h * h;  // [4H, H]
    float* y = has_.y ? args.out(kLstmY) : nullptr;

    int64_t steps = 0;
    for (int64_t b = 0; b < d_.batch; ++b) steps = std::max(steps, length(lens, b));
    for (int64_t s = 0; s < steps; ++s) {
      // gates [batch, 4H] = H_{t-1} [batch, H] · R^T
      sgemm(false, true, static_cast<int>(d_.batch), static_cast<int>(four_h), static_cast<int>(h),
            1.0f, h_state, static_cast<int>(h), r, static_cast<int>(h), 0.0f, gates,
            static_cast<int>(four_h));
      for (int64_t b = 0; b < d_.batch; ++b) {
        const int64_t len = length(lens, b);
        if (s >= len) continue;  // this sequence has ended: its state stays as it was
        // A reverse pass starts at each sequence's own last step.
        const int64_t t = reverse ? len - 1 - s : s;
        const float* xg = xw + idx_.x_row(t, b) * gate_width() + dir * four_h;
        cell_step(cell, xg, gates + b * four_h, c_state + b * h, h_state + b * h);
        if (y) std::memcpy(y + idx_.y_offset(t, dir, b), h_state + b * h, h * sizeof(float));
      }
    }
    if (y) {
      // Y is zero past each sequence's length.
      for (int64_t b = 0; b < d_.batch; ++b) {
        for (int64_t t = length(lens, b); t < d_.seq; ++t) {
          float* row = y + idx_.y_offset(t, dir, b);
          std::fill(row, row + h, 0.0f);
        }
      }
    }
    if (has_.y_h) store_state(h_state, lens, dir, args.out(kLstmYH));
    if (has_.y_c) store_state(c_state, lens, dir, args.out(kLstmYC));
  }

  std::string where_;  // for errors about sequence_lens, found only at run time
  LstmAttributes attrs_;
  LstmDims d_;
  RnnLayoutIndex idx_;
  LstmPresence has_;
  std::vector<float> no_peephole_;  // [3H] zeros: the peephole terms of a node without P
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

  KernelChoice choice;
  choice.kernel = std::make_unique<LstmKernel>(node.where(), attrs, dims, has);
  choice.algorithm = "gemm+gates";
  choice.workspace_bytes = LstmKernel::workspace_floats(dims) * sizeof(float);
  return choice;
}

}  // namespace

void register_cpu_lstm_kernels(KernelRegistry& r) { r.add("LSTM", plan_lstm); }

}  // namespace dnnx
