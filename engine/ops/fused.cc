// The ops the rewrite passes (core/passes) create: "<op>+Relu" means the op with a Relu applied
// to its output. Same attributes, inputs and shapes as the op itself, so the definition is a
// copy; a backend runs them only where it registers a kernel (else the pass leaves the pair).
// LSTMStack (stacked LSTM layers in one node) has a definition of its own: ops/lstm_stack.cc.
#include "ops/families.h"

namespace dnnx {

namespace {

void add_relu_fused(OpRegistry& r, const std::string& op) {
  OpDef def = *r.find(op);
  def.fused = true;
  r.add(op + "+Relu", std::move(def));
}

}  // namespace

void register_fused_ops(OpRegistry& r) {
  add_relu_fused(r, "Conv");
  add_relu_fused(r, "Gemm");
  register_lstm_stack_ops(r);
}

}  // namespace dnnx
