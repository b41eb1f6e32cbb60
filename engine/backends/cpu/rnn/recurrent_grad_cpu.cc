// GRU's and RNN's gradients on the CPU: back-propagation through time, with GEMMs for every
// matrix product, as LSTM's (lstm_grad_cpu.cc). Per direction:
//   1. recompute the forward pass with the forward kernel's cell math (recurrent_cell_cpu.cc),
//      keeping every step's state and GRU's gate activations;
//   2. walk the steps backwards: from dH of a step, the pre-activation gradients of the whole
//      batch (below); dH_prev and dR are GEMMs with R and H_prev;
//   3. dW = dA^T X and dX += dA W over all steps at once (dA: the gradients of X·W^T's blocks),
//      dWb = the column sums of dA, dRb likewise (GRU's Rbh under linear_before_reset: its own).
// RNN, H = f(a):  da = dH * f'(a), f' from H (Tanh 1-H^2, Sigmoid H(1-H), Relu H>0).
// GRU, H = (1-z) n + z H_prev:  dn = dH (1-z);  dz = dH (H_prev - n);  da_n = dn (1-n^2);
//   da_z = dz z(1-z);  dH_prev = dH z + (the products with R below).
//   linear_before_reset = 0, a_n = x_n + (r H_prev)·Rh^T + Rbh:  d(rH) = da_n·Rh;
//     da_r = d(rH) H_prev r(1-r);  dH_prev += d(rH) r;  dRh += da_n^T (r H_prev).
//   linear_before_reset = 1, a_n = x_n + r (H_prev·Rh^T + Rbh) = x_n + r hh:  dhh = da_n r;
//     da_r = da_n hh r(1-r);  dH_prev += dhh·Rh;  dRh += dhh^T H_prev;  dRbh = sum dhh.
//   dH_prev += [da_z, da_r]·R_zr;  dR_zr += [da_z, da_r]^T H_prev.
// Not differentiated (refused at plan time by OpDef::untrainable): clip and sequence_lens.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/dense/blas.h"
#include "backends/cpu/rnn/recurrent_cell_cpu.h"
#include "backends/cpu/rnn/rnn_layout_cpu.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// The node's optional inputs and outputs: the call's pointer arrays are only as long as its lists.
struct RecurrentGradPresence {
  bool b = false, initial_h = false;
  size_t n_inputs = 0, n_outputs = 0;
};

// c [m, n] (ldc) (beta=0: =, 1: +=) a · b or a^T · b, the operands' row strides given.
void gemm(bool trans_a, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) {
    if (beta == 0.0f) for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  sgemm(trans_a, false, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda),
        b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

class RecurrentGradKernel final : public GradKernel {
 public:
  RecurrentGradKernel(const RecurrentAttributes& attrs, const LstmDims& dims, const RecurrentGradPresence& has)
      : attrs_(attrs), d_(dims), idx_(dims, attrs.layout), has_(has), zeros_(static_cast<size_t>(dims.hidden), 0.0f) {}

  // The sum of the Buffers below.
  static size_t workspace_floats(const RecurrentAttributes& attrs, const LstmDims& d) {
    const int64_t rows = d.seq * d.batch, gh = attrs.gates() * d.hidden, bh = d.batch * d.hidden;
    return static_cast<size_t>(3 * rows * gh + rows * d.hidden + (d.seq + 1) * bh + 2 * d.batch * gh + 3 * bh +
                               d.hidden);
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
    float* xw;    // [seq*batch, G*H] in X's row order: X W^T + biases of this direction
    float* acts;  // [seq, batch, G*H] by step s: GRU's z, r, n
    float* dg;    // [seq*batch, G*H] in X's row order: the gradients of X·W^T's blocks
    float* hh;    // [seq, batch, H] by step: GRU's H_prev·Rh^T + Rbh
    float* h;     // [seq+1, batch, H] by step: h[0] is the initial state
    float* dgr;   // [batch, G*H]: the gradients of the products with R of one step
    float* hr;    // [batch, G*H]: step scratch
    float* rh;    // [batch, H]: step scratch (GRU: r ⊙ H_prev, d(r ⊙ H_prev))
    float* dh;    // [batch, H]: dLoss/dH of the step being walked
    float* dh2;   // [batch, H]: dLoss/dH_prev being formed
    float* drbh;  // [H]: GRU's dRbh under linear_before_reset
  };
  Buffers buffers(void* workspace) const {
    const int64_t rows = d_.seq * d_.batch, gh = attrs_.gates() * d_.hidden, bh = d_.batch * d_.hidden;
    Buffers b;
    b.xw = static_cast<float*>(workspace);
    b.acts = b.xw + rows * gh;
    b.dg = b.acts + rows * gh;
    b.hh = b.dg + rows * gh;
    b.h = b.hh + rows * d_.hidden;
    b.dgr = b.h + (d_.seq + 1) * bh;
    b.hr = b.dgr + d_.batch * gh;
    b.rh = b.hr + d_.batch * gh;
    b.dh = b.rh + bh;
    b.dh2 = b.dh + bh;
    b.drbh = b.dh2 + bh;
    return b;
  }

  bool gru() const { return attrs_.cell == RecurrentCell::Gru; }
  bool reverse(int64_t dir) const { return attrs_.direction == LstmDirection::Reverse || dir == 1; }
  int64_t gh() const { return attrs_.gates() * d_.hidden; }
  int64_t step_of(int64_t dir, int64_t s) const { return reverse(dir) ? d_.seq - 1 - s : s; }
  // dLoss/d(output i), or nullptr when the node has no such output or no gradient reaches it.
  const float* d_out(const GradArgs& args, size_t i) const { return i < has_.n_outputs ? args.d_outputs[i] : nullptr; }
  // Where dLoss/d(input i) goes, or nullptr when the node has no such input or none is wanted.
  float* d_in(const GradArgs& args, size_t i) const { return i < has_.n_inputs ? args.d_inputs[i] : nullptr; }
  const float* r_of(const GradArgs& args, int64_t dir) const { return args.in(kRecR) + dir * gh() * d_.hidden; }

  void recompute(const GradArgs& args, int64_t dir, const Buffers& buf) const {
    const int64_t h = d_.hidden, bh = d_.batch * h;
    recurrent_input_projection(attrs_, d_, args.in(kRecX), args.in(kRecW), has_.b ? args.in(kRecB) : nullptr, dir, 1,
                               buf.xw);
    idx_.load_state(has_.initial_h ? args.in(kRecInitialH) : nullptr, dir, buf.h);
    RecurrentStepParams p;
    p.cell = attrs_.cell;
    p.linear_before_reset = attrs_.linear_before_reset;
    if (!gru()) p.activation = attrs_.activations[dir];
    p.batch = d_.batch;
    p.hidden = h;
    p.clip = std::numeric_limits<float>::infinity();
    p.r = r_of(args, dir);
    p.rbh = has_.b && attrs_.linear_before_reset ? args.in(kRecB) + dir * 2 * gh() + gh() + 2 * h : zeros_.data();
    std::vector<const float*> xg(static_cast<size_t>(d_.batch));
    RecurrentStepBuffers sb;
    sb.xg = xg.data();
    sb.hr = buf.hr;
    sb.rh = buf.rh;
    for (int64_t s = 0; s < d_.seq; ++s) {
      const int64_t t = step_of(dir, s);
      for (int64_t b = 0; b < d_.batch; ++b) xg[b] = buf.xw + idx_.x_row(t, b) * gh();
      sb.h_prev = buf.h + s * bh;
      sb.h_next = buf.h + (s + 1) * bh;
      sb.acts = buf.acts + s * d_.batch * gh();
      sb.hh = buf.hh + s * bh;
      recurrent_step(p, sb);
    }
  }

  // The rows of step s: dA into dg (X's row order) and dgr, and dH_prev's direct part into dh2.
  void rnn_step_grads(int64_t dir, int64_t s, const Buffers& buf) const {
    const int64_t h = d_.hidden, t = step_of(dir, s);
    const RecurrentActivation f = attrs_.activations[dir];
    for (int64_t b = 0; b < d_.batch; ++b) {
      const float* y = buf.h + ((s + 1) * d_.batch + b) * h;
      const float* dh = buf.dh + b * h;
      float* dgr = buf.dgr + b * h;
      for (int64_t j = 0; j < h; ++j) {
        const float slope = f == RecurrentActivation::Tanh      ? 1.0f - y[j] * y[j]
                            : f == RecurrentActivation::Sigmoid ? y[j] * (1.0f - y[j])
                                                                : (y[j] > 0.0f ? 1.0f : 0.0f);
        dgr[j] = dh[j] * slope;
      }
      std::memcpy(buf.dg + idx_.x_row(t, b) * h, dgr, h * sizeof(float));
    }
  }

  // rh_block: this direction's Rh [H, H].
  void gru_step_grads(int64_t dir, int64_t s, const float* rh_block, const Buffers& buf) const {
    const int64_t h = d_.hidden, g = gh(), t = step_of(dir, s);
    const bool lbr = attrs_.linear_before_reset;
    for (int64_t b = 0; b < d_.batch; ++b) {
      const float* act = buf.acts + (s * d_.batch + b) * g;  // z, r, n
      const float* hp = buf.h + (s * d_.batch + b) * h;
      const float* hh = buf.hh + (s * d_.batch + b) * h;
      const float* dh = buf.dh + b * h;
      float* dh2 = buf.dh2 + b * h;
      float* dgr = buf.dgr + b * g;
      float* dg = buf.dg + idx_.x_row(t, b) * g;
      for (int64_t j = 0; j < h; ++j) {
        const float z = act[j], r = act[h + j], n = act[2 * h + j];
        const float da_n = dh[j] * (1.0f - z) * (1.0f - n * n);
        const float da_z = dh[j] * (hp[j] - n) * z * (1.0f - z);
        dh2[j] = dh[j] * z;
        dg[j] = dgr[j] = da_z;
        dg[2 * h + j] = da_n;
        if (lbr) {
          dgr[2 * h + j] = da_n * r;
          dg[h + j] = dgr[h + j] = da_n * hh[j] * r * (1.0f - r);
          buf.drbh[j] += da_n * r;
        } else {
          dgr[2 * h + j] = da_n;  // da_r follows once d(r ⊙ H_prev) is known
        }
      }
    }
    if (lbr) return;
    // d(r ⊙ H_prev) [batch, H] = da_n [batch, H] · Rh [H, H] (into rh), then da_r and the rest.
    gemm(false, d_.batch, h, h, buf.dgr + 2 * h, g, rh_block, h, 0.0f, buf.rh, h);
    for (int64_t b = 0; b < d_.batch; ++b) {
      const float* r = buf.acts + (s * d_.batch + b) * g + h;
      const float* hp = buf.h + (s * d_.batch + b) * h;
      float* drh = buf.rh + b * h;
      float* dh2 = buf.dh2 + b * h;
      float* dgr = buf.dgr + b * g;
      float* dg = buf.dg + idx_.x_row(t, b) * g;
      for (int64_t j = 0; j < h; ++j) {
        dg[h + j] = dgr[h + j] = drh[j] * hp[j] * r[j] * (1.0f - r[j]);
        dh2[j] += drh[j] * r[j];
        drh[j] = r[j] * hp[j];  // rh now holds r ⊙ H_prev, for dRh
      }
    }
  }

  void backprop(const GradArgs& args, int64_t dir, const Buffers& buf) const {
    const int64_t h = d_.hidden, g = gh(), bh = d_.batch * h;
    const bool lbr = attrs_.linear_before_reset;
    const float* dy = d_out(args, kRecY);
    const float* dy_h = d_out(args, kRecYH);
    idx_.load_state(dy_h, dir, buf.dh);
    const float* r = r_of(args, dir);
    float* dr = d_in(args, kRecR) ? d_in(args, kRecR) + dir * g * h : nullptr;
    if (dr) std::fill_n(dr, g * h, 0.0f);
    std::fill_n(buf.drbh, h, 0.0f);
    float* dh = buf.dh;
    float* dh2 = buf.dh2;
    for (int64_t s = d_.seq; s-- > 0;) {
      const int64_t t = step_of(dir, s);
      for (int64_t b = 0; dy && b < d_.batch; ++b) {
        const float* dyt = dy + idx_.y_offset(t, dir, b);
        for (int64_t j = 0; j < h; ++j) dh[b * h + j] += dyt[j];
      }
      Buffers step = buf;
      step.dh = dh;
      step.dh2 = dh2;
      const float* hp = buf.h + s * bh;
      if (gru()) {
        gru_step_grads(dir, s, r + 2 * h * h, step);
        // Both forms: dH_prev += dA_zr · R_zr, dR_zr += dA_zr^T H_prev; the h block after.
        const int64_t k = lbr ? g : 2 * h;  // linear_before_reset: the h block joins (dhh, H_prev)
        gemm(false, d_.batch, h, k, buf.dgr, g, r, h, 1.0f, dh2, h);
        if (dr) gemm(true, k, h, d_.batch, buf.dgr, g, hp, h, 1.0f, dr, h);
        if (dr && !lbr) gemm(true, h, h, d_.batch, buf.dgr + 2 * h, g, buf.rh, h, 1.0f, dr + 2 * h * h, h);
      } else {
        rnn_step_grads(dir, s, step);
        gemm(false, d_.batch, h, h, buf.dgr, h, r, h, 0.0f, dh2, h);
        if (dr) gemm(true, h, h, d_.batch, buf.dgr, h, hp, h, 1.0f, dr, h);
      }
      std::swap(dh, dh2);
    }
    if (float* dh0 = d_in(args, kRecInitialH)) idx_.store_state(dh, dir, dh0);
  }

  void weight_grads(const GradArgs& args, int64_t dir, const Buffers& buf) const {
    const int64_t g = gh(), rows = d_.seq * d_.batch, in = d_.input;
    if (float* dw = d_in(args, kRecW)) {
      // dW [G*H, I] = dA^T [G*H, rows] x X [rows, I]
      gemm(true, g, in, rows, buf.dg, g, args.in(kRecX), in, 0.0f, dw + dir * g * in, in);
    }
    if (float* dx = d_in(args, kRecX)) {
      // dX [rows, I] (+)= dA [rows, G*H] x W [G*H, I]; the second direction adds to the first.
      gemm(false, rows, in, g, buf.dg, g, args.in(kRecW) + dir * g * in, in, dir == 0 ? 0.0f : 1.0f, dx, in);
    }
    if (float* db = d_in(args, kRecB)) {
      db += dir * 2 * g;  // Wb then Rb
      std::fill_n(db, g, 0.0f);
      for (int64_t row = 0; row < rows; ++row) {
        const float* a = buf.dg + row * g;
        for (int64_t k = 0; k < g; ++k) db[k] += a[k];
      }
      std::memcpy(db + g, db, g * sizeof(float));
      // GRU's Rbh under linear_before_reset sits inside r ⊙ (...): its own sum.
      if (gru() && attrs_.linear_before_reset) std::memcpy(db + g + 2 * d_.hidden, buf.drbh, d_.hidden * sizeof(float));
    }
  }

  RecurrentAttributes attrs_;
  LstmDims d_;
  RnnLayoutIndex idx_;
  RecurrentGradPresence has_;
  std::vector<float> zeros_;  // [H]: Rbh where the step must not add one
};

GradChoice plan_recurrent_grad(const GradRequest& r) {
  const RecurrentAttributes attrs = parse_recurrent_attributes(r.node);
  // Clip and sequence_lens were refused by OpDef::untrainable (ops/rnn/recurrent.cc).
  auto in = [&](size_t i) { return i < r.inputs.size() && r.inputs[i].present; };
  const LstmDims dims = recurrent_dims(r.node, attrs, r.inputs);
  RecurrentGradPresence has;
  has.b = in(kRecB);
  has.initial_h = in(kRecInitialH);
  has.n_inputs = r.inputs.size();
  has.n_outputs = r.outputs.size();
  GradChoice choice;
  choice.algorithm = "bptt (gemm+gates)";
  choice.workspace_bytes = RecurrentGradKernel::workspace_floats(attrs, dims) * sizeof(float);
  choice.kernel = std::make_unique<RecurrentGradKernel>(attrs, dims, has);
  return choice;
}

}  // namespace

void register_cpu_recurrent_grad_kernels(KernelRegistry& r) {
  r.at("GRU").with_gradient(plan_recurrent_grad);
  r.at("RNN").with_gradient(plan_recurrent_grad);
}

}  // namespace dnnx
