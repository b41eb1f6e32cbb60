// com.microsoft's DynamicQuantizeLSTM on the CPU (ops/rnn/dynamic_quantize_lstm.cc has its
// meaning). Per direction:
//   X [rows = max_len * batch, I]  --(uint8 over all of it, as DynamicQuantizeLinear; minus zp)-->
//   int16 x  ·  (W - w_zp) [I, 4H] int16  =  int32 sums  -->  xw = float(sum) * (x_scale * w_scale)
//   then each step: H_{t-1} [batch, H] quantized the same way over the batch, · (R - r_zp)
//   [H, 4H], scaled, added to the step's xw row, and LSTM's cell (lstm_cell_cpu.h) with Wb + Rb
//   as the gates' second term: i = sigmoid(clip(xw + hr + b)), ...
// The products are exact int32 sums, not float simulation: with W and R constants (as
// quantize_dynamic writes them) packed once at plan time for the int8 GEMM of Note [int8 gemm
// paths] (AVX-512 VNNI on this EPYC), else the int16 loop every CPU int8 op
// shares (gemm_s16, Note [int8 gemm]); the sums are the same either way. Note [dynamic lstm as onnxruntime]: what
// onnxruntime's kernel quantizes, this one does: X once over the steps up to the longest
// sequence; H_{t-1} per step over the whole batch (onnxruntime at one thread: with more, it splits
// the batch into row blocks quantized apart, so its own outputs move with its thread count);
// a sequence that has ended feeds zeros to later steps' quantization where Y is an output (its Y
// row, zero-filled) and its last H_t otherwise, as onnxruntime's previous-state pointer reads.
// The weights' zero points are taken per column where the file gives them so (onnxruntime's
// kernel reads the first one only; its quantizer writes one per direction). Gate math: the float
// LSTM's (sigmoid and tanh of fast_expf), which onnxruntime's float LSTM matches within 1e-6.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/quant/dynamic_quantize_cpu.h"
#include "backends/cpu/quant/int8_gemm_cpu.h"
#include "backends/cpu/quant/int_gemm_cpu.h"
#include "backends/cpu/quant/quant_codec.h"
#include "backends/cpu/rnn/lstm_cell_avx2_cpu.h"
#include "backends/cpu/rnn/lstm_cell_cpu.h"
#include "backends/cpu/rnn/rnn_layout_cpu.h"
#include "backends/cpu/runtime/thread_pool.h"
#include "ops/rnn/dynamic_quantize_lstm.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

struct DqLstmPlan {
  std::string where;  // the node, for errors found at run time
  LstmAttributes attrs;
  LstmDims d;
  bool has_b = false, has_lens = false, has_h0 = false, has_c0 = false, has_p = false;
  bool has_y = false, has_y_h = false, has_y_c = false;
  bool w_per_column = false, r_per_column = false;  // the scales (and zero points): [num_dir, 4H]
  bool has_w_zp = false, has_r_zp = false;
  DType w_type = DType::Int8, r_type = DType::Int8;
  int workers = 1;
  // W and R per direction, packed at plan time where they (and their zero points) are constants;
  // empty otherwise (the int16 loop reads them per call)
  std::vector<Int8Weights> w_packed, r_packed;

  int64_t four_h() const { return kDqLstmGates * d.hidden; }
  int64_t rows() const { return d.seq * d.batch; }
};

// The workspace, in this order: float buffers first, then the integer ones, each 64-byte aligned.
struct DqLstmBuffers {
  float *xw, *gates, *h, *c, *fed, *bias, *peephole_zeros;
  int32_t* acc;
  int16_t *x16, *w16, *r16, *h16;  // the int16 loop's (no bytes where W and R are packed)
  uint8_t *xq, *hq;
  void* scratch;  // the packed products' (int8_gemm_scratch_bytes)
};

size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

class DqLstmKernel final : public Kernel {
 public:
  explicit DqLstmKernel(DqLstmPlan p) : p_(std::move(p)) {}

  size_t workspace_bytes() const {
    size_t total = 0;
    for (size_t bytes : sizes()) total += align64(bytes);
    return total;
  }

  void run(const KernelArgs& args) const override {
    const LstmDims& d = p_.d;
    const DqLstmBuffers buf = buffers(args.workspace);
    const int32_t* lens = p_.has_lens ? args.in<int32_t>(kLstmSequenceLens) : nullptr;
    check_sequence_lens(p_.where, lens, d);  // InputError naming the node
    int64_t max_len = 0;
    for (int64_t b = 0; b < d.batch; ++b) max_len = std::max<int64_t>(max_len, lens ? lens[b] : d.seq);
    // X up to the longest sequence, quantized once for both directions (a reversed copy holds the
    // same values, so onnxruntime's reverse pass finds the same parameters)
    const int64_t x_elems = max_len * d.batch * d.input;
    const DynamicQuantParams xp = dynamic_quant_params(args.in(kLstmX), x_elems);
    dynamic_quantize(args.in(kLstmX), x_elems, xp, buf.xq);
    for (int64_t dir = 0; dir < d.num_dir; ++dir) run_direction(args, buf, dir, lens, max_len, xp);
  }

 private:
  std::vector<size_t> sizes() const {
    const LstmDims& d = p_.d;
    const size_t n = static_cast<size_t>(d.batch * d.hidden), g = static_cast<size_t>(p_.four_h());
    const size_t rows = static_cast<size_t>(p_.rows());
    const size_t s16 = p_.w_packed.empty() ? sizeof(int16_t) : 0;  // the int16 loop's operands: none when packed
    return {rows * g * sizeof(float), d.batch * g * sizeof(float), n * sizeof(float), n * sizeof(float),
            n * sizeof(float), g * sizeof(float), 3 * d.hidden * sizeof(float),
            std::max(rows, static_cast<size_t>(d.batch)) * g * sizeof(int32_t),
            rows * d.input * s16, d.input * g * s16, d.hidden * g * s16, n * s16, rows * d.input, n,
            packed_scratch_bytes()};
  }

  size_t packed_scratch_bytes() const {
    size_t most = 0;
    for (const Int8Weights& w : p_.w_packed) most = std::max(most, int8_gemm_scratch_bytes(w, p_.rows()));
    for (const Int8Weights& r : p_.r_packed) most = std::max(most, int8_gemm_scratch_bytes(r, p_.d.batch));
    return most;
  }

  DqLstmBuffers buffers(void* workspace) const {
    char* at = static_cast<char*>(workspace);
    std::vector<char*> parts;
    for (size_t bytes : sizes()) {
      parts.push_back(at);
      at += align64(bytes);
    }
    DqLstmBuffers b;
    b.xw = reinterpret_cast<float*>(parts[0]);
    b.gates = reinterpret_cast<float*>(parts[1]);
    b.h = reinterpret_cast<float*>(parts[2]);
    b.c = reinterpret_cast<float*>(parts[3]);
    b.fed = reinterpret_cast<float*>(parts[4]);
    b.bias = reinterpret_cast<float*>(parts[5]);
    b.peephole_zeros = reinterpret_cast<float*>(parts[6]);
    b.acc = reinterpret_cast<int32_t*>(parts[7]);
    b.x16 = reinterpret_cast<int16_t*>(parts[8]);
    b.w16 = reinterpret_cast<int16_t*>(parts[9]);
    b.r16 = reinterpret_cast<int16_t*>(parts[10]);
    b.h16 = reinterpret_cast<int16_t*>(parts[11]);
    b.xq = reinterpret_cast<uint8_t*>(parts[12]);
    b.hq = reinterpret_cast<uint8_t*>(parts[13]);
    b.scratch = parts[14];
    return b;
  }

  // acc [n, 4H] = (q [n, k] uint8 - q_zp) x (weight - its zero point) [k, 4H], exact int32 sums:
  // on the packed weights where there are (C^T = W^T x q^T, tile by tile into acc's columns), else
  // through the int16 loop (q16 and w16 made here).
  void product(const Int8Weights* packed, const uint8_t* q, uint8_t q_zp, int64_t n, int64_t k, const KernelArgs& args,
               size_t in, size_t zp_in, bool per_column, DType type, int64_t dir, int16_t* q16, int16_t* w16,
               const DqLstmBuffers& buf) const {
    const int64_t g = p_.four_h();
    int32_t* acc = buf.acc;
    if (packed) {
      int8_gemm_tiles(*packed, q, false, q_zp, n, 1, k,
                      [&](int64_t m0, int64_t rows, int64_t j0, int64_t cols, const int32_t* tile, int64_t ld) {
                        for (int64_t r = 0; r < rows; ++r) {
                          for (int64_t i = 0; i < cols; ++i) acc[(j0 + i) * g + m0 + r] = tile[r * ld + i];
                        }
                      },
                      buf.scratch, p_.workers);
      return;
    }
    minus_zero_point<uint8_t>(q, 1, n * k, n * k, &q_zp, ParamSpread::PerTensor, q16);
    weight16(args, in, zp_in, per_column, type, dir, k, w16);
    gemm_s16(n, g, k, q16, w16, acc, p_.workers);
  }

  // dst [rows, 4H] int16 = a weight's direction `dir` minus its zero point (per tensor or column).
  void weight16(const KernelArgs& args, size_t in, size_t zp_in, bool per_column, DType type, int64_t dir,
                int64_t rows, int16_t* dst) const {
    const int64_t g = p_.four_h();
    const bool has_zp = zp_in == kDqLstmWZeroPoint ? p_.has_w_zp : p_.has_r_zp;
    with_int8_type(type, [&](auto tag) {
      using T = decltype(tag);
      const T* w = args.in<T>(in) + dir * rows * g;
      const T* zp = has_zp ? args.in<T>(zp_in) + (per_column ? dir * g : dir) : nullptr;
      minus_zero_point<T>(w, rows, g, g, zp, per_column ? ParamSpread::PerColumn : ParamSpread::PerTensor, dst);
      return 0;
    });
  }

  // The multipliers float(sum) is scaled by: a_scale * the weight's scale, per column.
  void multipliers(const float* scale, bool per_column, int64_t dir, float a_scale, std::vector<float>& out) const {
    const int64_t g = p_.four_h();
    out.resize(static_cast<size_t>(g));
    for (int64_t j = 0; j < g; ++j) out[static_cast<size_t>(j)] = a_scale * (per_column ? scale[dir * g + j] : scale[dir]);
  }

  void run_direction(const KernelArgs& args, const DqLstmBuffers& buf, int64_t dir, const int32_t* lens,
                     int64_t max_len, const DynamicQuantParams& xp) const {
    const LstmDims& d = p_.d;
    const int64_t h = d.hidden, g = p_.four_h(), batch = d.batch;
    const bool reverse = p_.attrs.direction == LstmDirection::Reverse || dir == 1;
    auto length = [&](int64_t b) -> int64_t { return lens ? lens[b] : d.seq; };
    const Int8Weights* w_packed = p_.w_packed.empty() ? nullptr : &p_.w_packed[static_cast<size_t>(dir)];
    const Int8Weights* r_packed = p_.r_packed.empty() ? nullptr : &p_.r_packed[static_cast<size_t>(dir)];
    // xw [rows, 4H] = X · W, scaled
    std::vector<float> mult;
    const int64_t rows = max_len * batch;
    product(w_packed, buf.xq, xp.zero_point, rows, d.input, args, kLstmW, kDqLstmWZeroPoint, p_.w_per_column, p_.w_type,
            dir, buf.x16, buf.w16, buf);
    multipliers(args.in(kDqLstmWScale), p_.w_per_column, dir, xp.scale, mult);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < g; ++j) buf.xw[r * g + j] = static_cast<float>(buf.acc[r * g + j]) * mult[static_cast<size_t>(j)];
    // Wb + Rb, the gates' second term
    for (int64_t j = 0; j < g; ++j) {
      buf.bias[j] = p_.has_b ? args.in(kLstmB)[dir * 2 * g + j] + args.in(kLstmB)[dir * 2 * g + g + j] : 0.0f;
    }
    const size_t state = static_cast<size_t>(batch * h);
    if (p_.has_h0) {
      std::memcpy(buf.h, args.in(kLstmInitialH) + dir * state, state * sizeof(float));
    } else {
      std::fill(buf.h, buf.h + state, 0.0f);
    }
    if (p_.has_c0) {
      std::memcpy(buf.c, args.in(kLstmInitialC) + dir * state, state * sizeof(float));
    } else {
      std::fill(buf.c, buf.c + state, 0.0f);
    }
    std::memcpy(buf.fed, buf.h, state * sizeof(float));
    std::fill(buf.peephole_zeros, buf.peephole_zeros + 3 * h, 0.0f);
    CellParams cell;
    cell.hidden = h;
    cell.clip = p_.attrs.has_clip ? p_.attrs.clip : std::numeric_limits<float>::infinity();
    cell.input_forget = p_.attrs.input_forget;
    cell.peephole = p_.has_p ? args.in(kLstmP) + dir * 3 * h : buf.peephole_zeros;
    const bool plain = !p_.has_p && !p_.attrs.has_clip && !p_.attrs.input_forget && lstm_cell_avx2_available();
    float* y = p_.has_y ? args.out(kLstmY) : nullptr;
    for (int64_t s = 0; s < max_len; ++s) {
      // H_{t-1} [batch, H] quantized over the batch, · R, scaled (Note [dynamic lstm as onnxruntime])
      const DynamicQuantParams hp = dynamic_quant_params(buf.fed, batch * h);
      dynamic_quantize(buf.fed, batch * h, hp, buf.hq);
      product(r_packed, buf.hq, hp.zero_point, batch, h, args, kLstmR, kDqLstmRZeroPoint, p_.r_per_column, p_.r_type, dir,
              buf.h16, buf.r16, buf);
      multipliers(args.in(kDqLstmRScale), p_.r_per_column, dir, hp.scale, mult);
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = length(b);
        float* fed = buf.fed + b * h;
        if (s >= len) {  // ended: its state stays; what the next step's quantization sees
          if (y) std::fill(fed, fed + h, 0.0f);
          continue;
        }
        const int64_t t = reverse ? len - 1 - s : s;
        float* gates = buf.gates + b * g;
        const float* xw = buf.xw + (t * batch + b) * g;
        const int32_t* acc = buf.acc + b * g;
        for (int64_t j = 0; j < g; ++j) gates[j] = xw[j] + static_cast<float>(acc[j]) * mult[static_cast<size_t>(j)];
        float* hb = buf.h + b * h;
        if (plain) {
          lstm_cell_avx2(h, gates, buf.bias, buf.c + b * h, hb);
        } else {
          cell_step(cell, gates, buf.bias, buf.c + b * h, hb);
        }
        std::memcpy(fed, hb, static_cast<size_t>(h) * sizeof(float));
        if (y) std::memcpy(y + ((t * d.num_dir + dir) * batch + b) * h, hb, static_cast<size_t>(h) * sizeof(float));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (y) {
        for (int64_t t = len; t < d.seq; ++t) std::fill_n(y + ((t * d.num_dir + dir) * batch + b) * h, h, 0.0f);
      }
      // a zero-length sequence ends in a zero state, as onnxruntime's does
      const float* from[2] = {buf.h + b * h, buf.c + b * h};
      const bool wanted[2] = {p_.has_y_h, p_.has_y_c};
      for (int k = 0; k < 2; ++k) {
        if (!wanted[k]) continue;
        float* out = args.out(k == 0 ? kLstmYH : kLstmYC) + (dir * batch + b) * h;
        if (len == 0) {
          std::fill_n(out, h, 0.0f);
        } else {
          std::memcpy(out, from[k], static_cast<size_t>(h) * sizeof(float));
        }
      }
    }
  }

  DqLstmPlan p_;
};

// W [num_dir, K, 4H] (K: input or hidden) of direction dir as the int8 GEMM's W^T [4H, K], its zero
// point per column (a row of W^T) or per direction.
Int8Weights pack_direction(const ConstTensor& w, const ConstTensor* zp, bool per_column, int64_t dir, int64_t k,
                           int64_t four_h) {
  const auto* base = reinterpret_cast<const uint8_t*>(w.data.data()) + dir * k * four_h;
  const uint8_t* z = zp ? reinterpret_cast<const uint8_t*>(zp->data.data()) + (per_column ? dir * four_h : dir) : nullptr;
  return pack_int8_weights(base, w.info.dtype == DType::Int8, four_h, k, 1, four_h, z, per_column, default_int8_path());
}

// p.w_packed and p.r_packed where W, R and their zero points are constants (both, or neither).
void pack_constant_weights(DqLstmPlan& p, const std::vector<ValueInfo>& inputs) {
  auto constant = [&](size_t i) { return present(inputs, i) ? inputs[i].constant : nullptr; };
  const ConstTensor* w = constant(kLstmW);
  const ConstTensor* r = constant(kLstmR);
  const ConstTensor* wz = constant(kDqLstmWZeroPoint);
  const ConstTensor* rz = constant(kDqLstmRZeroPoint);
  if (!w || !r || (p.has_w_zp && !wz) || (p.has_r_zp && !rz)) return;
  for (int64_t dir = 0; dir < p.d.num_dir; ++dir) {
    p.w_packed.push_back(pack_direction(*w, wz, p.w_per_column, dir, p.d.input, p.four_h()));
    p.r_packed.push_back(pack_direction(*r, rz, p.r_per_column, dir, p.d.hidden, p.four_h()));
  }
}

KernelChoice plan_dynamic_quantize_lstm(const Node& node, const std::vector<ValueInfo>& inputs,
                                        const std::vector<TensorInfo>&) {
  DqLstmPlan p;
  p.where = node.where();
  p.attrs = parse_lstm_attributes(node);
  p.d = dynamic_quantize_lstm_dims(node, p.attrs, inputs);
  p.has_b = present(inputs, kLstmB);
  p.has_lens = present(inputs, kLstmSequenceLens);
  p.has_h0 = present(inputs, kLstmInitialH);
  p.has_c0 = present(inputs, kLstmInitialC);
  p.has_p = present(inputs, kLstmP);
  p.has_y = node.has_output(kLstmY);
  p.has_y_h = node.has_output(kLstmYH);
  p.has_y_c = node.has_output(kLstmYC);
  p.w_type = inputs[kLstmW].info.dtype;
  p.r_type = inputs[kLstmR].info.dtype;
  p.w_per_column = inputs[kDqLstmWScale].info.shape.size() == 2;
  p.r_per_column = inputs[kDqLstmRScale].info.shape.size() == 2;
  p.has_w_zp = present(inputs, kDqLstmWZeroPoint);
  p.has_r_zp = present(inputs, kDqLstmRZeroPoint);
  p.workers = plan_workers(p.rows(), p.four_h() * std::max(p.d.input, p.d.hidden));
  pack_constant_weights(p, inputs);
  const std::string path = p.w_packed.empty() ? "int16 loop" : int8_path_name(p.w_packed[0].path);
  KernelChoice choice;
  auto kernel = std::make_unique<DqLstmKernel>(p);
  choice.algorithm = with_threads("uint8 x int8 gemm (" + path + "), int32 accumulation, float gates", p.workers);
  choice.workspace_bytes = kernel->workspace_bytes();
  choice.kernel = std::move(kernel);
  return choice;
}

}  // namespace

void register_cpu_dynamic_quantize_lstm_kernels(KernelRegistry& r) {
  r.add(op_key(kMicrosoftDomain, "DynamicQuantizeLSTM"), plan_dynamic_quantize_lstm).with_dtypes(int8_types());
}

}  // namespace dnnx
