// The math of GRU and RNN on the CPU, shared by the forward kernel (recurrent_cpu.cc) and the
// gradient's recomputation of the forward (recurrent_grad_cpu.cc): the input projection of all
// steps at once and one time step of one direction for the whole batch.
// GRU gates are in ONNX order z, r, h throughout (G = 3); RNN has one (G = 1).
#pragma once
#include <cstdint>

#include "ops/rnn/recurrent_attrs.h"

namespace dnnx {

// xw [seq*batch, dir_count*G*H] = X·W^T + biases for directions dir_first..dir_first+dir_count-1,
// rows in X's order. The biases folded in are Wb + Rb, except GRU's Rbh under
// linear_before_reset, which the step adds inside r ⊙ (...). b may be null (no B input).
void recurrent_input_projection(const RecurrentAttributes& attrs, const LstmDims& d, const float* x,
                                const float* w, const float* b, int64_t dir_first, int64_t dir_count,
                                float* xw);

// The bias row of that projection, [dir_count*G*H]: Wb + Rb (GRU's Rbh left out under
// linear_before_reset), or zeros where b is null. The packed projection takes it as its bias.
void recurrent_projection_bias(const RecurrentAttributes& attrs, const LstmDims& d, const float* b,
                               int64_t dir_first, int64_t dir_count, float* row);

class RecurrentPanels;
class TapGemm;

// One direction's constants for its steps.
struct RecurrentStepParams {
  RecurrentCell cell = RecurrentCell::Gru;
  bool linear_before_reset = false;
  RecurrentActivation activation = RecurrentActivation::Tanh;  // RNN's f of this direction
  int64_t batch = 0, hidden = 0;
  float clip = 0.0f;           // pre-activations clamped to [-clip, clip]; +inf for none
  const float* r = nullptr;    // [G*H, H]: this direction's R
  const float* rbh = nullptr;  // [H] (GRU): Rbh under linear_before_reset, else zeros; never null
  // Batch 1 with a constant R: R^T packed at plan time (Note [gru panels]), else null (the dot
  // products over r). GRU: panels over R's z and r blocks, or all three under linear_before_reset;
  // panels_h over its h block where the step needs that product on its own. RNN: panels over R.
  const RecurrentPanels* panels = nullptr;
  const RecurrentPanels* panels_h = nullptr;
  // A batch of a few rows or more (Note [recurrent step tiles] in recurrent_cpu.cc): the same
  // products as TapGemms over R^T packed in tile-width panels (tap_b, tap_h_b) for this call,
  // split as panels and panels_h are; null otherwise.
  const TapGemm* tap = nullptr;
  const float* tap_b = nullptr;
  const TapGemm* tap_h = nullptr;
  const float* tap_h_b = nullptr;
};

// One step's buffers. Rows of h_prev/h_next/scratch are batch entries, H or G*H wide.
struct RecurrentStepBuffers {
  // xg[b]: the xw row (this direction's G*H block) of entry b at this step; nullptr when b's
  // sequence has ended (its state is carried over unchanged).
  const float* const* xg = nullptr;
  const float* h_prev = nullptr;  // [batch, H]
  float* h_next = nullptr;        // [batch, H]; may be h_prev itself
  float* hr = nullptr;            // [batch, G*H] scratch: h_prev·R^T (GRU's h block: (r⊙h_prev)·Rh^T)
  float* rh = nullptr;            // [batch, H] scratch (GRU): r ⊙ h_prev
  // GRU only (RNN: unused), filled for the active rows and kept by the gradient for backprop:
  float* acts = nullptr;  // [batch, G*H]: z, r, h~
  float* hh = nullptr;    // [batch, H]: h_prev·Rh^T + Rbh (read under linear_before_reset)
};

void recurrent_step(const RecurrentStepParams& p, const RecurrentStepBuffers& buf);

}  // namespace dnnx
