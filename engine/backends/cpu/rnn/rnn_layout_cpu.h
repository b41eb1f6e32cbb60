// Where the CPU's recurrent kernels (LSTM, GRU, RNN) find step t of batch entry b in X, Y and the
// states, for either ONNX layout, and the moves of the hidden state in and out of them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "ir/errors.h"
#include "ops/rnn/lstm_attrs.h"

namespace dnnx {

struct RnnLayoutIndex {
  LstmDims d;
  bool batch_major = false;

  RnnLayoutIndex(const LstmDims& dims, RnnLayout layout)
      : d(dims), batch_major(layout == RnnLayout::BatchMajor) {}

  // Row of X [seq*batch, input] (and of anything kept per row of X) holding step t of entry b.
  int64_t x_row(int64_t t, int64_t b) const { return batch_major ? b * d.seq + t : t * d.batch + b; }
  // The rows of step t for the whole batch: x_row(t, b) = step_first_row(t) + b * step_row_stride().
  int64_t step_first_row(int64_t t) const { return batch_major ? t : t * d.batch; }
  int64_t step_row_stride() const { return batch_major ? d.seq : 1; }
  // Offset of Y[t, dir, b, :] (layout 0) or Y[b, t, dir, :] (layout 1).
  int64_t y_offset(int64_t t, int64_t dir, int64_t b) const {
    return (batch_major ? (b * d.seq + t) * d.num_dir + dir : (t * d.num_dir + dir) * d.batch + b) * d.hidden;
  }
  // Offset of state[dir, b, :] (layout 0) or state[b, dir, :] (layout 1): initial_h/c, Y_h/Y_c.
  int64_t state_offset(int64_t dir, int64_t b) const {
    return (batch_major ? b * d.num_dir + dir : dir * d.batch + b) * d.hidden;
  }

  // state [batch, H] = direction dir of `from` (initial_h's layout), or zeros when from is null.
  void load_state(const float* from, int64_t dir, float* state) const {
    for (int64_t b = 0; b < d.batch; ++b) {
      float* row = state + b * d.hidden;
      if (from) std::memcpy(row, from + state_offset(dir, b), d.hidden * sizeof(float));
      else std::fill(row, row + d.hidden, 0.0f);
    }
  }
  // Direction dir of `to` (Y_h's layout) = state [batch, H].
  void store_state(const float* state, int64_t dir, float* to) const {
    for (int64_t b = 0; b < d.batch; ++b) {
      std::memcpy(to + state_offset(dir, b), state + b * d.hidden, d.hidden * sizeof(float));
    }
  }
};

// sequence_lens is data, so it is checked per call: each length must lie in [0, seq].
inline void check_sequence_lens(const std::string& where, const int32_t* lens, const LstmDims& d) {
  for (int64_t b = 0; lens && b < d.batch; ++b) {
    if (lens[b] < 0 || lens[b] > d.seq) {
      throw InputError(where + ": sequence_lens[" + std::to_string(b) + "] is " + std::to_string(lens[b]) +
                       ", expected a value in [0, " + std::to_string(d.seq) + "]");
    }
  }
}

}  // namespace dnnx
