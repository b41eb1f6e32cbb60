// What one recurrent node (LSTM, GRU or RNN: one layer) is to cuDNN's RNN v8 API, shared by the
// forward kernel (rnn_forward.cc), the training kernel (rnn_train.cc) and the op files that plan
// them (lstm_cuda.cc, recurrent_cuda.cc and their _grad_ files):
//  - the cell: cuDNN's mode, the number of gates and which ONNX gate block each cuDNN gate is;
//  - the form: direction and layout (ONNX's; cuDNN has no "reverse", rnn_layouts.h);
//  - the sizes (LstmDims: GRU and RNN read them into the same struct, ops/rnn/recurrent_attrs.h);
//  - which optional inputs and outputs the node has.
// The three ops put X, W, R, B, sequence_lens, initial_h at the same input positions and Y, Y_h
// at the same output positions; initial_c (input 6) and Y_c (output 2) are LSTM's alone.
#pragma once
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "ops/rnn/lstm_attrs.h"
#include "ops/rnn/recurrent_attrs.h"

namespace dnnx::cuda {

enum RnnInput : size_t {
  kRnnX = 0,
  kRnnW = 1,
  kRnnR = 2,
  kRnnB = 3,
  kRnnSequenceLens = 4,
  kRnnInitialH = 5,
  kRnnInitialC = 6,  // LSTM only
};
enum RnnOutput : size_t { kRnnY = 0, kRnnYH = 1, kRnnYC = 2 /* LSTM only */ };
constexpr bool same_positions(std::initializer_list<std::pair<size_t, size_t>> pairs) {
  for (const auto& p : pairs) {
    if (p.first != p.second) return false;
  }
  return true;
}
static_assert(same_positions({{kRnnX, kLstmX}, {kRnnW, kLstmW}, {kRnnR, kLstmR}, {kRnnB, kLstmB},
                              {kRnnSequenceLens, kLstmSequenceLens}, {kRnnInitialH, kLstmInitialH},
                              {kRnnInitialC, kLstmInitialC}, {kRnnY, kLstmY}, {kRnnYH, kLstmYH}, {kRnnYC, kLstmYC}}),
              "LSTM's input and output positions");
static_assert(same_positions({{kRnnX, kRecX}, {kRnnW, kRecW}, {kRnnR, kRecR}, {kRnnB, kRecB},
                              {kRnnSequenceLens, kRecSequenceLens}, {kRnnInitialH, kRecInitialH}, {kRnnY, kRecY},
                              {kRnnYH, kRecYH}}),
              "GRU's and RNN's input and output positions");

// cuDNN's cell. Its weight space holds, per direction, 2 * gates linear layers: linLayerID k <
// gates is gate k's input matrix (ONNX's W block) and gates + k its recurrent one (R); the
// biases likewise (CUDNN_RNN_DOUBLE_BIAS keeps ONNX's Wb and Rb apart). cuDNN's gate k is ONNX's
// gate block onnx_gate[k]:
//   LSTM  cuDNN i, f, c, o        ONNX i, o, f, c
//   GRU   cuDNN r, z (update), h  ONNX z, r, h
//   RNN   one gate
struct CudnnCell {
  cudnnRNNMode_t mode = CUDNN_LSTM;
  int gates = 4;
  std::array<size_t, 4> onnx_gate = {0, 2, 3, 1};
  const char* name = "LSTM";  // for messages
};
inline const CudnnCell kLstmCell{CUDNN_LSTM, 4, {0, 2, 3, 1}, "LSTM"};
// cuDNN's GRU is ONNX's linear_before_reset=1 form: h' = tanh(W_h x + r * (R_h h + Rb_h) + Wb_h).
inline const CudnnCell kGruCell{CUDNN_GRU, 3, {1, 0, 2, 0}, "GRU"};
inline const CudnnCell kRnnTanhCell{CUDNN_RNN_TANH, 1, {0, 0, 0, 0}, "RNN"};
inline const CudnnCell kRnnReluCell{CUDNN_RNN_RELU, 1, {0, 0, 0, 0}, "RNN"};

// Direction and layout, as ONNX gives them.
struct RnnForm {
  LstmDirection direction = LstmDirection::Forward;
  RnnLayout layout = RnnLayout::SeqMajor;
  bool reversed() const { return direction == LstmDirection::Reverse; }
  bool batch_major() const { return layout == RnnLayout::BatchMajor; }
};

// Which optional inputs and outputs the node has.
struct RnnPresence {
  bool b = false, sequence_lens = false, initial_h = false, initial_c = false;
  bool y = false, y_h = false, y_c = false;
};

struct RnnNode {
  CudnnCell cell;
  RnnForm form;
  LstmDims dims;
  RnnPresence has;
};

// Presence read from the node's inputs (absent: beyond the list, or not present) and outputs.
inline RnnPresence rnn_presence(const Node& node, const std::vector<ValueInfo>& inputs,
                                size_t outputs = SIZE_MAX) {
  auto in = [&](size_t i) { return i < inputs.size() && inputs[i].present; };
  auto out = [&](size_t o) { return o < outputs && node.has_output(o); };
  RnnPresence has;
  has.b = in(kRnnB);
  has.sequence_lens = in(kRnnSequenceLens);
  has.initial_h = in(kRnnInitialH);
  has.initial_c = in(kRnnInitialC);
  has.y = out(kRnnY);
  has.y_h = out(kRnnYH);
  has.y_c = out(kRnnYC);
  return has;
}

// cuDNN's sizes are int: every tensor of the node must have fewer than 2^31 elements.
inline void check_rnn_sizes(const Node& node, const CudnnCell& cell, const LstmDims& d) {
  for (int64_t n : {d.seq * d.batch * d.input, d.seq * d.batch * d.num_dir * d.hidden,
                    cell.gates * d.hidden * d.input, cell.gates * d.hidden * d.hidden}) {
    if (n > INT_MAX) node_fail<UnsupportedModelError>(node, "tensors of more than 2^31-1 elements are not supported");
  }
}

// The math of a float32 or float16 RNN, and its words for the plan. fp32: FMA only. tf32:
// cuDNN's default math, which lets fp32 RNNs use TF32 tensor cores (CUDNN_TENSOR_OP_MATH is not
// what cuDNN documents for fp32 RNN data). fp16 (half data): tensor ops, fp32 math precision.
inline cudnnMathType_t rnn_math(const CudaContext& ctx, bool half) {
  if (half) return CUDNN_TENSOR_OP_MATH;
  return ctx.options.precision == Precision::Tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
}
inline std::string rnn_math_name(cudnnMathType_t math) {
  return math == CUDNN_TENSOR_OP_MATH ? "fp16 storage, tensor ops, fp32 accumulation (CUDNN_TENSOR_OP_MATH)"
         : math == CUDNN_DEFAULT_MATH ? "tf32 permitted (CUDNN_DEFAULT_MATH)"
                                      : "fp32 (CUDNN_FMA_MATH)";
}

}  // namespace dnnx::cuda
