// The LSTM cell update of one batch row, every cell form (peepholes, clip, coupled input and
// forget gates): the portable loop of lstm_cell_cpu.cc, shared by LSTM (lstm_cpu.cc) and
// com.microsoft's DynamicQuantizeLSTM (dynamic_quantize_lstm_cpu.cc). The plain cell has an AVX2
// form too (lstm_cell_avx2_cpu.h).
#pragma once
#include <cstdint>

namespace dnnx {

// What the gate math of one direction needs besides the inputs of one step.
struct CellParams {
  int64_t hidden = 0;
  float clip = 0.0f;               // +inf when the node has no clip
  bool input_forget = false;
  const float* peephole = nullptr;  // [3H] in order i, o, f (zeros when the node has no P)
};

// xg and hg [4H] in gate order i, o, f, c, summed per gate (xg = X_t·W^T + Wb + Rb and
// hg = H_{t-1}·R^T for LSTM); c [H] is updated in place and h [H] receives H_t.
void cell_step(const CellParams& p, const float* xg, const float* hg, float* c, float* h);

}  // namespace dnnx
