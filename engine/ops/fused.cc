// The ops the rewrite passes (runtime/passes) create: "<op>+Relu" (Conv, Gemm, BatchNormalization) means the op with a Relu applied
// to its output, "Gemm+Softmax" a Gemm whose [M,N] output is normalised by a Softmax over each
// row (N). Same attributes, inputs and shapes as the op itself, so the definition is a copy; a
// backend runs them only where it registers a kernel (else the pass leaves the pair).
// LSTMStack (stacked LSTM layers in one node) has a definition of its own: ops/rnn/lstm_stack.cc.
#include "ops/op.h"

namespace dnnx {

namespace {

void add_fused(OpRegistry& r, const std::string& op, const std::string& suffix) {
  OpDef def = *r.find(op);
  def.fused = true;
  r.add(op + suffix, std::move(def));
}

}  // namespace

void register_fused_ops(OpRegistry& r) {
  add_fused(r, "Conv", "+Relu");
  // fuse_conv_activation: Conv+Clip (attributes clip_min, clip_max), Conv+HardSwish, Conv+Swish (SiLU).
  {  // Conv's validation, the bounds the pass added aside
    OpDef clip = *r.find("Conv");
    clip.fused = true;
    clip.validate = [conv = clip.validate](const Node& node) {
      Node without_bounds = node;
      without_bounds.attrs.erase("clip_min");
      without_bounds.attrs.erase("clip_max");
      if (conv) conv(without_bounds);
    };
    r.add("Conv+Clip", std::move(clip));
  }
  add_fused(r, "Conv", "+HardSwish");
  add_fused(r, "Conv", "+Swish");
  add_fused(r, "Gemm", "+Relu");
  add_fused(r, "BatchNormalization", "+Relu");  // fuse_batchnorm_relu
  add_fused(r, "Gemm", "+Softmax");
}

}  // namespace dnnx
