// LSTM's gradient on the CPU: back-propagation through time, with GEMMs for everything that is
// a matrix product. Per direction (gate order i, o, f, c throughout, as in lstm_cpu.cc):
//   1. recompute the forward pass, keeping every step's gate activations and states (the forward
//      kernel keeps nothing): xw = X W^T + Wb + Rb in one GEMM, then per step H_{s} R^T and the
//      gate math;
//   2. walk the steps backwards: the gate pre-activation gradients dG of one step for the whole
//      batch come from dH and dC by the chain rule (below); dH_{s} = dG R and dR += dG^T H_{s}
//      are one GEMM each;
//   3. dW = dG^T X and dX += dG W over all steps at once, dWb = dRb = the column sums of dG.
// With o = sigmoid(.. + po*c), i, f likewise on c_prev, g = tanh(..), c = f*c_prev + i*g,
// h = o*tanh(c):  do = dh*tanh(c);  dc += dh*o*(1-tanh(c)^2) + do_pre*po;
//   di_pre = dc*g*i(1-i);  df_pre = dc*c_prev*f(1-f);  dg_pre = dc*i*(1-g^2);
//   dc_prev = dc*f + di_pre*pi + df_pre*pf.
// Not differentiated (refused at plan time): clip, input_forget and sequence_lens.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/elementwise/activation_cpu.h"
#include "backends/cpu/dense/blas.h"
#include "backends/cpu/rnn/rnn_layout_cpu.h"
#include "runtime/kernel_registry.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx {

namespace {

constexpr int64_t kGates = 4;  // i, o, f, c

// The node's optional inputs and outputs: the call's pointer arrays are only as long as its lists.
struct LstmGradPresence {
  bool b = false, initial_h = false, initial_c = false, p = false;
  size_t n_inputs = 0, n_outputs = 0;
};

class LstmGradKernel final : public GradKernel {
 public:
  LstmGradKernel(const LstmAttributes& attrs, const LstmDims& dims, const LstmGradPresence& has)
      : attrs_(attrs), d_(dims), idx_(dims, attrs.layout), has_(has),
        zeros_(static_cast<size_t>(3 * dims.hidden), 0.0f) {}

  // The sum of the Buffers below.
  static size_t workspace_floats(const LstmDims& d) {
    const int64_t rows = d.seq * d.batch, h = d.hidden;
    return static_cast<size_t>(3 * rows * kGates * h + 2 * (d.seq + 1) * d.batch * h + d.batch * kGates * h +
                               2 * d.batch * h);
  }

  void run(const GradArgs& args) const override {
    const Buffers buf = buffers(args.workspace);
    for (int64_t dir = 0; dir < d_.num_dir; ++dir) {
      recompute(args, dir, buf);
      backprop(args, dir, buf);
      weight_grads(args, dir, buf);
    }
  }

 private:
  struct Buffers {
    float* xw;     // [seq*batch, 4H] in X's row order: X W^T + biases of this direction
    float* gates;  // [seq, batch, 4H] by step s: the activations i, o, f, g
    float* dg;     // [seq*batch, 4H] in X's row order: the pre-activation gradients
    float* c;      // [seq+1, batch, H] by step: c[0] is the initial state
    float* h;      // [seq+1, batch, H]
    float* hr;     // [batch, 4H]: H_s R^T of the step being recomputed
    float* dh;     // [batch, H]
    float* dc;     // [batch, H]
  };
  Buffers buffers(void* workspace) const {
    const int64_t rows = d_.seq * d_.batch, h = d_.hidden, bh = d_.batch * h;
    Buffers b;
    b.xw = static_cast<float*>(workspace);
    b.gates = b.xw + rows * kGates * h;
    b.dg = b.gates + rows * kGates * h;
    b.c = b.dg + rows * kGates * h;
    b.h = b.c + (d_.seq + 1) * bh;
    b.hr = b.h + (d_.seq + 1) * bh;
    b.dh = b.hr + d_.batch * kGates * h;
    b.dc = b.dh + bh;
    return b;
  }

  bool reverse(int64_t dir) const { return attrs_.direction == LstmDirection::Reverse || dir == 1; }
  // dLoss/d(output i), or nullptr when the node has no such output or no gradient reaches it.
  const float* d_out(const GradArgs& args, size_t i) const { return i < has_.n_outputs ? args.d_outputs[i] : nullptr; }
  // Where dLoss/d(input i) goes, or nullptr when the node has no such input or none is wanted.
  float* d_in(const GradArgs& args, size_t i) const { return i < has_.n_inputs ? args.d_inputs[i] : nullptr; }
  const float* peephole(const GradArgs& args, int64_t dir) const {
    return has_.p ? args.in(kLstmP) + dir * 3 * d_.hidden : zeros_.data();
  }

  void recompute(const GradArgs& args, int64_t dir, const Buffers& buf) const {
    const int64_t h = d_.hidden, four_h = kGates * h, rows = d_.seq * d_.batch;
    const float* w = args.in(kLstmW) + dir * four_h * d_.input;
    const float* r = args.in(kLstmR) + dir * four_h * h;
    for (int64_t row = 0; row < rows; ++row) {
      float* xw = buf.xw + row * four_h;
      if (has_.b) {
        const float* wb = args.in(kLstmB) + dir * 2 * four_h;
        for (int64_t g = 0; g < four_h; ++g) xw[g] = wb[g] + wb[four_h + g];
      } else {
        std::fill(xw, xw + four_h, 0.0f);
      }
    }
    if (rows > 0 && d_.input > 0) {
      sgemm(false, true, static_cast<int>(rows), static_cast<int>(four_h), static_cast<int>(d_.input), 1.0f,
            args.in(kLstmX), static_cast<int>(d_.input), w, static_cast<int>(d_.input), 1.0f, buf.xw,
            static_cast<int>(four_h));
    }
    idx_.load_state(has_.initial_h ? args.in(kLstmInitialH) : nullptr, dir, buf.h);
    idx_.load_state(has_.initial_c ? args.in(kLstmInitialC) : nullptr, dir, buf.c);
    const float* p = peephole(args, dir);
    for (int64_t s = 0; s < d_.seq; ++s) {
      const int64_t t = reverse(dir) ? d_.seq - 1 - s : s;
      const float* h_prev = buf.h + s * d_.batch * h;
      sgemm(false, true, static_cast<int>(d_.batch), static_cast<int>(four_h), static_cast<int>(h), 1.0f, h_prev,
            static_cast<int>(h), r, static_cast<int>(h), 0.0f, buf.hr, static_cast<int>(four_h));
      for (int64_t b = 0; b < d_.batch; ++b) {
        const float* xg = buf.xw + idx_.x_row(t, b) * four_h;
        const float* hg = buf.hr + b * four_h;
        const float* c_prev = buf.c + (s * d_.batch + b) * h;
        float* c_new = buf.c + ((s + 1) * d_.batch + b) * h;
        float* h_new = buf.h + ((s + 1) * d_.batch + b) * h;
        float* act = buf.gates + (s * d_.batch + b) * four_h;
        for (int64_t j = 0; j < h; ++j) {
          const float i = sigmoidf(xg[j] + hg[j] + p[j] * c_prev[j]);
          const float f = sigmoidf(xg[2 * h + j] + hg[2 * h + j] + p[2 * h + j] * c_prev[j]);
          const float g = std::tanh(xg[3 * h + j] + hg[3 * h + j]);
          const float c = f * c_prev[j] + i * g;
          const float o = sigmoidf(xg[h + j] + hg[h + j] + p[h + j] * c);
          act[j] = i;
          act[h + j] = o;
          act[2 * h + j] = f;
          act[3 * h + j] = g;
          c_new[j] = c;
          h_new[j] = o * std::tanh(c);
        }
      }
    }
  }

  void backprop(const GradArgs& args, int64_t dir, const Buffers& buf) const {
    const int64_t h = d_.hidden, four_h = kGates * h;
    const float* dy = d_out(args, kLstmY);
    const float* dy_h = d_out(args, kLstmYH);
    const float* dy_c = d_out(args, kLstmYC);
    idx_.load_state(dy_h, dir, buf.dh);
    idx_.load_state(dy_c, dir, buf.dc);
    const float* r = args.in(kLstmR) + dir * four_h * h;
    float* dr = d_in(args, kLstmR) ? d_in(args, kLstmR) + dir * four_h * h : nullptr;
    float* dp = d_in(args, kLstmP) ? d_in(args, kLstmP) + dir * 3 * h : nullptr;
    if (dr) std::fill(dr, dr + four_h * h, 0.0f);
    if (dp) std::fill(dp, dp + 3 * h, 0.0f);
    const float* p = peephole(args, dir);
    const int ld = static_cast<int>(idx_.step_row_stride() * four_h);
    for (int64_t s = d_.seq; s-- > 0;) {
      const int64_t t = reverse(dir) ? d_.seq - 1 - s : s;
      for (int64_t b = 0; b < d_.batch; ++b) {
        float* dh = buf.dh + b * h;
        float* dc = buf.dc + b * h;
        if (dy) {
          const float* dyt = dy + idx_.y_offset(t, dir, b);
          for (int64_t j = 0; j < h; ++j) dh[j] += dyt[j];
        }
        const float* act = buf.gates + (s * d_.batch + b) * four_h;
        const float* c_prev = buf.c + (s * d_.batch + b) * h;
        const float* c_new = buf.c + ((s + 1) * d_.batch + b) * h;
        float* dg = buf.dg + idx_.x_row(t, b) * four_h;
        for (int64_t j = 0; j < h; ++j) {
          const float i = act[j], o = act[h + j], f = act[2 * h + j], g = act[3 * h + j];
          const float tc = std::tanh(c_new[j]);
          const float do_pre = dh[j] * tc * o * (1.0f - o);
          const float dcj = dc[j] + dh[j] * o * (1.0f - tc * tc) + do_pre * p[h + j];
          const float di_pre = dcj * g * i * (1.0f - i);
          const float df_pre = dcj * c_prev[j] * f * (1.0f - f);
          const float dg_pre = dcj * i * (1.0f - g * g);
          dg[j] = di_pre;
          dg[h + j] = do_pre;
          dg[2 * h + j] = df_pre;
          dg[3 * h + j] = dg_pre;
          dc[j] = dcj * f + di_pre * p[j] + df_pre * p[2 * h + j];
          if (dp) {
            dp[j] += di_pre * c_prev[j];
            dp[h + j] += do_pre * c_new[j];
            dp[2 * h + j] += df_pre * c_prev[j];
          }
        }
      }
      const float* dgs = buf.dg + idx_.step_first_row(t) * four_h;
      const float* h_prev = buf.h + s * d_.batch * h;
      // dR [4H, H] += dG_s^T [4H, batch] x H_s [batch, H]
      if (dr) {
        sgemm(true, false, static_cast<int>(four_h), static_cast<int>(h), static_cast<int>(d_.batch), 1.0f, dgs, ld,
              h_prev, static_cast<int>(h), 1.0f, dr, static_cast<int>(h));
      }
      // dH_s [batch, H] = dG_s [batch, 4H] x R [4H, H]
      sgemm(false, false, static_cast<int>(d_.batch), static_cast<int>(h), static_cast<int>(four_h), 1.0f, dgs, ld, r,
            static_cast<int>(h), 0.0f, buf.dh, static_cast<int>(h));
    }
    if (float* dh0 = d_in(args, kLstmInitialH)) idx_.store_state(buf.dh, dir, dh0);
    if (float* dc0 = d_in(args, kLstmInitialC)) idx_.store_state(buf.dc, dir, dc0);
  }

  void weight_grads(const GradArgs& args, int64_t dir, const Buffers& buf) const {
    const int64_t four_h = kGates * d_.hidden, rows = d_.seq * d_.batch, in = d_.input;
    float* dw = d_in(args, kLstmW) ? d_in(args, kLstmW) + dir * four_h * in : nullptr;
    float* dx = d_in(args, kLstmX);
    if (dw) {
      if (rows == 0) {
        std::fill(dw, dw + four_h * in, 0.0f);
      } else if (in > 0) {
        // dW [4H, I] = dG^T [4H, rows] x X [rows, I]
        sgemm(true, false, static_cast<int>(four_h), static_cast<int>(in), static_cast<int>(rows), 1.0f, buf.dg,
              static_cast<int>(four_h), args.in(kLstmX), static_cast<int>(in), 0.0f, dw, static_cast<int>(in));
      }
    }
    if (dx && rows > 0 && in > 0) {
      // dX [rows, I] (+)= dG [rows, 4H] x W [4H, I]; the second direction adds to the first.
      sgemm(false, false, static_cast<int>(rows), static_cast<int>(in), static_cast<int>(four_h), 1.0f, buf.dg,
            static_cast<int>(four_h), args.in(kLstmW) + dir * four_h * in, static_cast<int>(in), dir == 0 ? 0.0f : 1.0f,
            dx, static_cast<int>(in));
    }
    if (d_in(args, kLstmB)) {
      float* db = d_in(args, kLstmB) + dir * 2 * four_h;  // Wb then Rb: the same sums
      std::fill(db, db + four_h, 0.0f);
      for (int64_t row = 0; row < rows; ++row) {
        const float* g = buf.dg + row * four_h;
        for (int64_t k = 0; k < four_h; ++k) db[k] += g[k];
      }
      std::memcpy(db + four_h, db, four_h * sizeof(float));
    }
  }

  LstmAttributes attrs_;
  LstmDims d_;
  RnnLayoutIndex idx_;
  LstmGradPresence has_;
  std::vector<float> zeros_;  // [3H]: the peepholes of a node without P
};

GradChoice plan_lstm_grad(const GradRequest& r) {
  const LstmAttributes attrs = parse_lstm_attributes(r.node);
  // Clip, input_forget and sequence_lens were refused by OpDef::untrainable (ops/rnn/lstm.cc).
  auto in = [&](size_t i) { return i < r.inputs.size() && r.inputs[i].present; };
  const LstmDims dims = lstm_dims(r.node, attrs, r.inputs);
  LstmGradPresence has;
  has.b = in(kLstmB);
  has.initial_h = in(kLstmInitialH);
  has.initial_c = in(kLstmInitialC);
  has.p = in(kLstmP);
  has.n_inputs = r.inputs.size();
  has.n_outputs = r.outputs.size();
  GradChoice choice;
  choice.algorithm = "bptt (gemm+gates)";
  choice.workspace_bytes = LstmGradKernel::workspace_floats(dims) * sizeof(float);
  choice.kernel = std::make_unique<LstmGradKernel>(attrs, dims, has);
  return choice;
}

}  // namespace

void register_cpu_lstm_grad_kernels(KernelRegistry& r) { r.at("LSTM").with_gradient(plan_lstm_grad); }

}  // namespace dnnx
