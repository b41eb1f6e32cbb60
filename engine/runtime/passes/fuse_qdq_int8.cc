// Note [qdq int8]: a QDQ file (onnxruntime's quantize_static) says "int8" with QuantizeLinear /
// DequantizeLinear pairs around float ops. This pass makes the int8 layer itself of
//     DequantizeLinear(x_q) ─┐
//     DequantizeLinear(w_q) ─┼─ Conv | Gemm | MatMul ─ [Relu | Clip] ─ QuantizeLinear ─> y_q
//     [bias] ────────────────┘
// one Int8Conv / Int8Gemm / Int8MatMul node (ops/quant/qdq_int8.cc) that reads x_q and writes
// y_q: an int32 accumulation and the requantization in one kernel, as onnxruntime's own QDQ
// fusion makes a QLinearConv of it. It also takes a residual join where it is as
// quantize_static writes it:
//     Conv ─ QuantizeLinear(r) ─ DequantizeLinear ─ Add ─ [Relu] ─ QuantizeLinear ─> y_q
//                         DequantizeLinear(z_q) ────┘
// (the Add's rounding is QLinearAdd's, as onnxruntime runs it), and, once a layer has fused,
// DequantizeLinear -> MaxPool -> QuantizeLinear of one scale and zero point becomes the MaxPool
// on the 8-bit values (try_int8_max_pool). Requirements, else the nodes
// stay as they are (float between the pairs): x_q int8/uint8 with one scale and zero point;
// w_q a constant int8/uint8 with one scale/zero point or one per output channel (the
// DequantizeLinear's axis is W's output-channel axis: Conv 0, Gemm 0 with transB else 1,
// MatMul 1), MatMul's W 2-D; the bias a float32 constant [M] or a DequantizeLinear of an int32
// constant [M] (zero point 0); Gemm with alpha = beta = 1 and no transA; y_q int8/uint8 with one
// scale and a zero point given; each intermediate value read by the next node alone; the
// backend has the fused op (the CPU; CUDA, on int8 tensor cores: backends/cuda/quant/, whose
// plan-time refusals run the layer on the host inside the CUDA plan). It runs before constant
// folding, which would dequantize the constant weights (the engine calls it: Engine's
// constructor), and is switched by PassOptions::fuse_qdq_int8 ("fuse_qdq_int8").
//
// Note [int8 float output]: dnnx.quantize (python/dnnx/_quant_graph.py) quantizes the inputs of
// each Conv/Gemm/MatMul and the residual joins its guard admits (Note [int8 residual join]), so
// some layers have no QuantizeLinear right after them (LeNet's Conv -> MaxPool -> Flatten ->
// QuantizeLinear, the last Gemm -> Softmax, ResNet's Conv -> Add where the join stays float).
// Such a layer, DequantizeLinear(x_q) and DequantizeLinear(const w_q) -> op [-> Relu] with a
// float output (no QuantizeLinear, or readers besides it), becomes the int8 layer without Y's
// parameters (inputs 6, 7 absent): the same exact int32 sums, then a dequantizing epilogue
//     y = float(sum + B_int32) * (x_scale * w_scale[m]) (+ B_float[m]), max(0, y) after a Relu.
// The float path it replaces computes sum_k (x_scale (x - x_zp)) (w_scale w) + B in float: the
// two differ by float rounding alone (the float path's K-term sum rounds each addition: about
// K * 2^-24 of sum |terms| at worst; here one rounding of the exact sum and the multiply-add),
// far inside one quantization step of the next layer's QuantizeLinear. It runs after the
// requantizing forms (which keep their layers) and the residual joins. Before it, a MaxPool
// between the layer and its QuantizeLinear,
//     DequantizeLinear(x_q), DequantizeLinear(w_q) -> op [-> Relu] -> MaxPool [-> Relu] -> QuantizeLinear
// (dnnx.quantize's Conv -> MaxPool -> Q), becomes the requantizing layer and the MaxPool on its
// 8-bit values (try_fuse_pooled): quantization with a positive scale is nondecreasing, so it
// commutes with the max (and with a Relu: the layer's floor at y_zero_point).
//
// Note [int8 batchnorm]: a Conv read by an inference BatchNormalization alone (constant float32
// [M] statistics, as dnnx.quantize leaves it in a model that has one) takes it in, in each of the
// forms above: inputs 15 bn_mult = scale / sqrt(var + epsilon) and 16 bn_add = B - mean * bn_mult
// (new constants, in double as fold_batchnorm computes them), one more per-channel affine step in
// the epilogue. In the residual form (Conv -> BatchNormalization -> QuantizeLinear(r) ->
// DequantizeLinear -> Add, as dnnx.quantize writes a ResNet block's join: Note [int8 residual
// join] in python/dnnx/_quant_graph.py) the step comes before r's quantization, as it does in the
// float graph. The float path folds the same BatchNormalization into
// the dequantized weights (fold_batchnorm): the two differ by float rounding.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

struct Context {
  Graph& graph;
  const std::map<std::string, TensorInfo>& types;   // symbolic dims as 1
  const std::map<std::string, TensorInfo>& types2;  // symbolic dims as 2: which dims follow them
  std::map<std::string, int> producer;  // value -> node index
};

const Node* produced_by(const Context& c, const std::string& value, const std::string& op) {
  auto it = c.producer.find(value);
  if (it == c.producer.end()) return nullptr;
  const Node& n = c.graph.nodes[static_cast<size_t>(it->second)];
  return n.op_type == op && n.domain.empty() ? &n : nullptr;
}

bool is_8bit(DType t) { return t == DType::Int8 || t == DType::UInt8; }

const TensorInfo* type_of(const Context& c, const std::string& value) {
  auto it = c.types.find(value);
  return it == c.types.end() ? nullptr : &it->second;
}

// Whether a and b have one shape however the symbolic dims are sized (tried at 1 and 2).
bool same_shape(const Context& c, const std::string& a, const std::string& b) {
  for (const auto* types : {&c.types, &c.types2}) {
    auto ia = types->find(a), ib = types->find(b);
    if (ia == types->end() || ib == types->end() || ia->second.shape != ib->second.shape) return false;
  }
  return true;
}

// A constant float32 of one value.
bool one_float(const Graph& g, const std::string& name) {
  const ConstTensor* t = find_constant(g, name);
  return t && t->info.dtype == DType::Float32 && numel(t->info.shape) == 1;
}

// Note [int8 clip]: a Clip between the layer and Y's QuantizeLinear (ReLU6 in MobileNets) joins
// the layer as its bounds (attributes clip_min, clip_max): quantizing is monotonic, so
// Q(clip(v, a, b)) = clamp(Q(v), Q(a), Q(b)), and the kernel narrows Y's integer range to
// [Q(a), Q(b)] (qdq_int8_cpu.cc, run_params). Its bounds: constant float32 scalars (inputs 1
// and 2 from opset 11, attributes before; an absent one unbounded); nullopt otherwise, or a NaN.
std::optional<std::pair<float, float>> constant_clip_bounds(const Graph& g, const Node& clip) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (clip.opset < 11) {
    lo = clip.attr_float("min", lo);
    hi = clip.attr_float("max", hi);
  } else {
    for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
      if (clip.inputs[i].empty()) continue;
      if (!one_float(g, clip.inputs[i])) return std::nullopt;
      float v = 0;
      std::memcpy(&v, find_constant(g, clip.inputs[i])->data.data(), sizeof(float));
      (i == 1 ? lo : hi) = v;
    }
  }
  if (std::isnan(lo) || std::isnan(hi)) return std::nullopt;
  return std::make_pair(lo, hi);
}

// A DequantizeLinear's (or QuantizeLinear's) per-tensor parameters: scale one float constant,
// zero point absent or one 8-bit constant.
bool per_tensor(const Graph& g, const Node& q) {
  if (q.inputs.size() < 2 || !one_float(g, q.inputs[1])) return false;
  if (!q.has_input(2)) return true;
  const ConstTensor* zp = find_constant(g, q.inputs[2]);
  return zp && is_8bit(zp->info.dtype) && numel(zp->info.shape) == 1;
}

// DequantizeLinear of an 8-bit activation with one scale and zero point: its node.
const Node* activation_dq(const Context& c, const std::string& value) {
  const Node* dq = produced_by(c, value, "DequantizeLinear");
  if (!dq || !per_tensor(c.graph, *dq)) return nullptr;
  const TensorInfo* t = type_of(c, dq->inputs[0]);
  return t && is_8bit(t->dtype) ? dq : nullptr;
}

// `value` before any Identity that makes it: torch's exporter writes an Identity for a constant
// that two names share, and onnxruntime's quantize_static then puts its DequantizeLinear before
// the Identity (its quantized MobileNetV2: 39 of 52 convs read their bias so, and stayed float).
std::string through_identities(const Context& c, std::string value) {
  while (const Node* id = produced_by(c, value, "Identity")) value = id->inputs[0];
  return value;
}

// DequantizeLinear of constant 8-bit weights, per tensor or per output channel along `axis`
// (through Identities).
const Node* weight_dq(const Context& c, const std::string& value, int64_t axis, size_t rank) {
  const Node* dq = produced_by(c, through_identities(c, value), "DequantizeLinear");
  if (!dq || dq->inputs.size() < 2) return nullptr;
  const ConstTensor* w = find_constant(c.graph, dq->inputs[0]);
  const ConstTensor* scale = find_constant(c.graph, dq->inputs[1]);
  if (!w || !is_8bit(w->info.dtype) || w->info.shape.size() != rank || !scale || scale->info.dtype != DType::Float32) {
    return nullptr;
  }
  const int64_t channels = w->info.shape[static_cast<size_t>(axis)];
  const int64_t count = numel(scale->info.shape);
  if (dq->attr_int("block_size", 0) != 0 || scale->info.shape.size() > 1) return nullptr;
  if (count != 1) {
    int64_t a = dq->attr_int("axis", 1);
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a != axis || count != channels) return nullptr;
  }
  if (dq->has_input(2)) {
    const ConstTensor* zp = find_constant(c.graph, dq->inputs[2]);
    if (!zp || zp->info.dtype != w->info.dtype || zp->info.shape != scale->info.shape) return nullptr;
  }
  return dq;
}

// The bias as the fused node takes it: {bias, bias_scale} ("" where absent); false: unusable.
bool bias_inputs(const Context& c, const Node& base, int64_t channels, std::string& bias, std::string& scale) {
  if (!base.has_input(2)) return true;
  const std::string b = through_identities(c, base.inputs[2]);
  auto per_channel_shape = [&](const Shape& shape) {  // [M], or Gemm's [1, N]: not a per-row [M, 1]
    return numel(shape) == channels && !shape.empty() && shape.back() == channels;
  };
  if (const ConstTensor* f = find_constant(c.graph, b)) {
    if (f->info.dtype != DType::Float32 || !per_channel_shape(f->info.shape)) return false;
    bias = b;
    return true;
  }
  const Node* dq = produced_by(c, b, "DequantizeLinear");
  if (!dq || dq->inputs.size() < 2) return false;
  const ConstTensor* q = find_constant(c.graph, dq->inputs[0]);
  const ConstTensor* s = find_constant(c.graph, dq->inputs[1]);
  if (!q || q->info.dtype != DType::Int32 || !per_channel_shape(q->info.shape) || !s || s->info.dtype != DType::Float32 ||
      (numel(s->info.shape) != 1 && numel(s->info.shape) != channels)) {
    return false;
  }
  if (dq->has_input(2)) {
    const ConstTensor* zp = find_constant(c.graph, dq->inputs[2]);
    if (!zp || zp->info.dtype != DType::Int32) return false;
    for (int64_t i = 0; i < numel(zp->info.shape); ++i) {
      if (zp->as<int32_t>()[i] != 0) return false;
    }
  }
  bias = dq->inputs[0];
  scale = dq->inputs[1];
  return true;
}

// The fused node for `base` (Conv, Gemm or MatMul) read through DequantizeLinears; nullopt when
// the pattern does not hold. Inputs 6.. (y's parameters) are left for the caller.
std::optional<Node> int8_layer(const Context& c, const Node& base) {
  if (!base.domain.empty() || base.outputs.size() != 1 || base.inputs.size() < 2) return std::nullopt;
  const TensorInfo* wt = type_of(c, base.inputs[1]);
  if (!wt) return std::nullopt;
  int64_t axis = 0;
  std::string op;
  if (base.op_type == "Conv") {
    op = "Int8Conv";
  } else if (base.op_type == "Gemm") {
    if (base.attr_int("transA", 0) != 0 || base.attr_float("alpha", 1.0f) != 1.0f || base.attr_float("beta", 1.0f) != 1.0f) {
      return std::nullopt;
    }
    op = "Int8Gemm";
    axis = base.attr_int("transB", 0) != 0 ? 0 : 1;
  } else if (base.op_type == "MatMul") {
    if (base.inputs.size() != 2) return std::nullopt;
    op = "Int8MatMul";
    axis = 1;
  } else {
    return std::nullopt;
  }
  const TensorInfo* xt = type_of(c, base.inputs[0]);
  if (!xt) return std::nullopt;
  const size_t rank = xt->shape.size();  // the ranks the fused op takes (Conv: 1 to 3 spatial dims)
  if (base.op_type == "Conv" ? rank < 3 || rank > 5 || wt->shape.size() != rank
                             : base.op_type == "Gemm" ? rank != 2 : rank < 2) {
    return std::nullopt;
  }
  const Node* dx = activation_dq(c, base.inputs[0]);
  const Node* dw = weight_dq(c, base.inputs[1], axis, base.op_type == "Conv" ? wt->shape.size() : 2);
  if (!dx || !dw) return std::nullopt;
  const int64_t channels = find_constant(c.graph, dw->inputs[0])->info.shape[static_cast<size_t>(axis)];
  std::string bias, bias_scale;
  if (base.op_type != "MatMul" && !bias_inputs(c, base, channels, bias, bias_scale)) return std::nullopt;
  Node fused;
  fused.op_type = op;
  fused.name = base.name;
  fused.opset = base.opset;
  fused.attrs = base.attrs;
  fused.attrs.erase("alpha");
  fused.attrs.erase("beta");
  fused.attrs.erase("transA");
  fused.inputs = {dx->inputs[0], dx->inputs[1], dx->has_input(2) ? dx->inputs[2] : "",
                  dw->inputs[0], dw->inputs[1], dw->has_input(2) ? dw->inputs[2] : "",
                  "", "", bias, bias_scale};
  return fused;
}

// The inference BatchNormalization that alone reads Conv `conv`'s output, with constant float32
// [M] statistics; nullptr where there is none.
const Node* foldable_bn(const Context& c, const Node& conv) {
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.outputs.size() != 1) return nullptr;
  const int i = sole_consumer(c.graph, conv.outputs[0]);
  if (i < 0) return nullptr;
  const Node& bn = c.graph.nodes[static_cast<size_t>(i)];
  if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5 || bn.outputs.size() != 1 ||
      bn.inputs[0] != conv.outputs[0] || bn.attr_int("training_mode", 0) != 0) {
    return nullptr;
  }
  const TensorInfo* wt = type_of(c, conv.inputs[1]);
  if (!wt || wt->shape.empty()) return nullptr;
  for (size_t k = 1; k < 5; ++k) {
    const ConstTensor* t = find_constant(c.graph, bn.inputs[k]);
    if (!t || t->info.dtype != DType::Float32 || t->info.shape != Shape{wt->shape[0]}) return nullptr;
  }
  return &bn;
}

// Note [int8 batchnorm]'s inputs 15 and 16 of `fused` for `bn`.
void attach_bn(Context& c, const Node& bn, Node& fused) {
  const ConstTensor* stat[5] = {};
  for (size_t k = 1; k < 5; ++k) stat[k] = find_constant(c.graph, bn.inputs[k]);
  const int64_t m = stat[1]->info.shape[0];
  const double epsilon = bn.attr_float("epsilon", 1e-5f);
  std::vector<float> mult(static_cast<size_t>(m)), add(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    const double s = static_cast<double>(stat[1]->as<float>()[i]) / std::sqrt(static_cast<double>(stat[4]->as<float>()[i]) + epsilon);
    mult[static_cast<size_t>(i)] = static_cast<float>(s);
    add[static_cast<size_t>(i)] = static_cast<float>(stat[2]->as<float>()[i] - stat[3]->as<float>()[i] * s);
  }
  const std::string base = bn.name.empty() ? fused.name : bn.name;
  if (fused.inputs.size() < 15) fused.inputs.resize(15);
  fused.inputs.resize(17);
  fused.inputs[15] = add_constant(c.graph, base + ".int8_bn_mult", {m}, std::move(mult));
  fused.inputs[16] = add_constant(c.graph, base + ".int8_bn_add", {m}, std::move(add));
}

// The Conv whose output r's QuantizeLinear reads in the residual form: the Conv writing `value`,
// or the Conv read by the inference BatchNormalization writing it alone (Note [int8 batchnorm]:
// dnnx.quantize leaves a block's last BatchNormalization in the file, so its join reads the
// BatchNormalization's output), `bn` then that BatchNormalization; nullptr where neither holds.
const Node* residual_layer(const Context& c, const std::string& value, const Node*& bn) {
  bn = nullptr;
  if (const Node* conv = produced_by(c, value, "Conv")) return conv;
  const Node* norm = produced_by(c, value, "BatchNormalization");
  const Node* conv = norm ? produced_by(c, norm->inputs[0], "Conv") : nullptr;
  if (!conv || foldable_bn(c, *conv) != norm) return nullptr;
  bn = norm;
  return conv;
}

// y's QuantizeLinear: per tensor, an 8-bit zero point given.
bool output_q(const Graph& g, const Node& q) {
  if (!q.domain.empty() || q.op_type != "QuantizeLinear" || !q.has_input(2) || !per_tensor(g, q)) return false;
  return q.outputs.size() == 1;
}

// Whether `value`, which node `from` writes, is read by node `by` alone.
bool only_read_by(const Context& c, const std::string& value, const Node& by) {
  const int i = sole_consumer(c.graph, value);
  return i >= 0 && &c.graph.nodes[static_cast<size_t>(i)] == &by;
}

int index_of(const Context& c, const Node& n) { return static_cast<int>(&n - c.graph.nodes.data()); }

// Tries the pattern that ends at QuantizeLinear node qi; residual: only the residual form.
bool try_fuse(Context& c, size_t qi, bool residual, const PassOptions& options, std::vector<bool>& dead) {
  const Node& q = c.graph.nodes[qi];
  if (dead[qi] || !output_q(c.graph, q)) return false;
  std::vector<int> consumed;
  std::string value = q.inputs[0];
  const Node* reader = &q;  // the node that reads `value`, walking back from Y's QuantizeLinear
  auto take = [&](const Node* n) {
    consumed.push_back(index_of(c, *n));
    reader = n;
    value = n->inputs[0];
  };
  // an Identity there passes the value through
  while (const Node* id = produced_by(c, value, "Identity")) {
    if (!only_read_by(c, value, *reader)) return false;
    take(id);
  }
  bool relu = false;
  std::optional<std::pair<float, float>> clip;  // Note [int8 clip]
  if (const Node* r = produced_by(c, value, "Relu")) {
    if (!only_read_by(c, value, *reader)) return false;
    relu = true;
    take(r);
  } else if (const Node* k = produced_by(c, value, "Clip"); k && !residual) {
    clip = constant_clip_bounds(c.graph, *k);
    if (clip && only_read_by(c, value, *reader)) take(k);
    else clip.reset();
  }
  std::vector<std::string> extra;  // the residual's inputs 10-14
  const Node* base = nullptr;
  const Node* bn = nullptr;
  if (residual) {
    const Node* add = produced_by(c, value, "Add");
    if (!add || add->inputs.size() != 2 || !only_read_by(c, value, *reader)) return false;
    for (int side = 0; side < 2 && !base; ++side) {
      const Node* dr = produced_by(c, add->inputs[side], "DequantizeLinear");
      const Node* dz = activation_dq(c, add->inputs[1 - side]);
      if (!dr || !dz || !per_tensor(c.graph, *dr) || !only_read_by(c, add->inputs[side], *add)) continue;
      const Node* rq = produced_by(c, dr->inputs[0], "QuantizeLinear");
      if (!rq || !output_q(c.graph, *rq) || !only_read_by(c, dr->inputs[0], *dr)) continue;
      const Node* rbn = nullptr;
      const Node* conv = residual_layer(c, rq->inputs[0], rbn);
      if (!conv || !only_read_by(c, rq->inputs[0], *rq)) continue;
      // r's parameters are the DequantizeLinear's (equal to the QuantizeLinear's in these files,
      // but the DequantizeLinear is what the float graph reads); r's type must be y's.
      const TensorInfo* rt = type_of(c, dr->inputs[0]);
      const TensorInfo* yt = type_of(c, q.outputs[0]);
      const TensorInfo* zt = type_of(c, dz->inputs[0]);
      const TensorInfo* ct = type_of(c, conv->outputs[0]);
      if (!rt || !yt || !zt || !ct || rt->dtype != yt->dtype || !same_shape(c, dz->inputs[0], conv->outputs[0]) ||
          !dr->has_input(2)) {
        continue;
      }
      if (rq->inputs[1] != dr->inputs[1] || rq->inputs[2] != dr->inputs[2]) continue;
      if (!int8_layer(c, *conv)) continue;  // a float Conv (kept so by dnnx's guard): try the other side
      base = conv;
      bn = rbn;
      if (bn) consumed.push_back(index_of(c, *bn));
      extra = {dr->inputs[1], dr->inputs[2], dz->inputs[0], dz->inputs[1], dz->has_input(2) ? dz->inputs[2] : ""};
      consumed.insert(consumed.end(), {index_of(c, *add), index_of(c, *dr), index_of(c, *rq)});
    }
    if (!base) return false;
  } else {
    auto it = c.producer.find(value);
    if (it == c.producer.end() || !only_read_by(c, value, *reader)) return false;
    base = &c.graph.nodes[static_cast<size_t>(it->second)];
    if (base->op_type == "BatchNormalization") {  // Note [int8 batchnorm]
      const Node* conv = produced_by(c, base->inputs[0], "Conv");
      if (!conv || foldable_bn(c, *conv) != base) return false;
      bn = base;
      consumed.push_back(index_of(c, *bn));
      base = conv;
    }
  }
  std::optional<Node> fused = int8_layer(c, *base);
  if (!fused) return false;
  consumed.push_back(index_of(c, *base));
  for (int i : consumed) {
    if (dead[static_cast<size_t>(i)]) return false;
  }
  fused->inputs[6] = q.inputs[1];
  fused->inputs[7] = q.inputs[2];
  fused->inputs.insert(fused->inputs.end(), extra.begin(), extra.end());
  if (bn) attach_bn(c, *bn, *fused);
  while (!fused->inputs.empty() && fused->inputs.back().empty()) fused->inputs.pop_back();
  if (relu) fused->attrs["relu"] = int64_t{1};
  if (clip) {
    fused->attrs["clip_min"] = clip->first;
    fused->attrs["clip_max"] = clip->second;
  }
  fused->outputs = q.outputs;
  if (!backend_can_run(options, *fused)) return false;
  c.graph.nodes[qi] = std::move(*fused);  // at the QuantizeLinear's place: every input is ready there
  for (int i : consumed) dead[static_cast<size_t>(i)] = true;
  return true;
}

// Drops the DequantizeLinears no node reads any more (the weights', the activations' last reader).
void drop_unread_dequantize(Graph& graph) {
  std::set<std::string> read(graph.outputs.begin(), graph.outputs.end());
  for (const Node& n : graph.nodes) read.insert(n.inputs.begin(), n.inputs.end());
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    dead[i] = n.op_type == "DequantizeLinear" && n.domain.empty() && n.outputs.size() == 1 && !read.count(n.outputs[0]);
  }
  erase_nodes(graph, dead);
}

// Two parameter inputs holding the same value (one float scale, or one 8-bit zero point of one type).
bool same_param(const Graph& g, const Node& a, const Node& b, size_t i) {
  if (a.has_input(i) != b.has_input(i)) return false;
  if (!a.has_input(i) || a.inputs[i] == b.inputs[i]) return true;
  const ConstTensor* x = find_constant(g, a.inputs[i]);
  const ConstTensor* y = find_constant(g, b.inputs[i]);
  return x && y && x->info.dtype == y->info.dtype && x->data == y->data;
}

// DequantizeLinear(x_q) -> MaxPool -> QuantizeLinear with the same scale and zero point =>
// MaxPool on x_q itself (its int8/uint8 kernel): the max commutes with the increasing
// dequantization, and quantizing a dequantized value with its own parameters gives it back
// exactly (|v - zp| <= 255: (v - zp) * s / s is within an ulp of v - zp). onnxruntime drops these
// pairs too. The MaxPool keeps its place and writes y_q; the QuantizeLinear goes.
//
// Note [8-bit max pool opset]: ONNX's MaxPool takes int8 and uint8 from opset 12 on, and a model
// of opset 11 or less (onnxruntime's quantizer writes opset 11 for an older float model, such as
// the model zoo's mnist-8) still gets the 8-bit MaxPool from this pass, as onnxruntime gives it.
// So the rewritten node is a MaxPool-12: its attributes (kernel_shape, pads, strides, dilations,
// ceil_mode, auto_pad, storage_order) mean the same from opset 8 on, with the same defaults.
Node max_pool_on(const Node& pool, const std::string& x_q, const std::vector<std::string>& outputs) {
  Node int8_pool = pool;
  int8_pool.inputs[0] = x_q;
  int8_pool.outputs = outputs;
  int8_pool.opset = std::max(pool.opset, 12);
  return int8_pool;
}

bool try_int8_max_pool(Context& c, size_t qi, const PassOptions& options, std::vector<bool>& dead) {
  const Node& q = c.graph.nodes[qi];
  if (dead[qi] || !output_q(c.graph, q)) return false;
  auto it = c.producer.find(q.inputs[0]);
  if (it == c.producer.end() || dead[static_cast<size_t>(it->second)]) return false;
  Node& pool = c.graph.nodes[static_cast<size_t>(it->second)];
  if (pool.op_type != "MaxPool" || !pool.domain.empty() || pool.outputs.size() != 1 || !only_read_by(c, q.inputs[0], q)) {
    return false;
  }
  const Node* dq = activation_dq(c, pool.inputs[0]);
  if (!dq || !same_param(c.graph, *dq, q, 1) || !same_param(c.graph, *dq, q, 2)) return false;
  Node int8_pool = max_pool_on(pool, dq->inputs[0], q.outputs);
  if (!backend_can_run(options, int8_pool)) return false;
  pool = std::move(int8_pool);
  dead[qi] = true;
  return true;
}

// A value name no node writes yet: base, base_, base__, ...
std::string fresh_value(const Context& c, std::string base) {
  while (c.producer.count(base)) base += "_";
  return base;
}

// Note [int8 float output]'s pooled form, ending at QuantizeLinear node qi: the layer (at its own
// place, writing a new 8-bit value) and the MaxPool reading it (writing y_q); the Relu and the
// QuantizeLinear go.
bool try_fuse_pooled(Context& c, size_t qi, const PassOptions& options, std::vector<bool>& dead) {
  const Node& q = c.graph.nodes[qi];
  if (dead[qi] || !output_q(c.graph, q) || !(find_constant(c.graph, q.inputs[1])->as<float>()[0] > 0.0f)) return false;
  std::vector<int> consumed;
  const Node* reader = &q;
  std::string value = q.inputs[0];
  bool relu = false;
  auto take_relu = [&]() {
    const Node* r = produced_by(c, value, "Relu");
    if (relu || !r || !only_read_by(c, value, *reader)) return;
    relu = true;
    consumed.push_back(index_of(c, *r));
    reader = r;
    value = r->inputs[0];
  };
  take_relu();
  const Node* pool = produced_by(c, value, "MaxPool");
  if (!pool || pool->outputs.size() != 1 || !only_read_by(c, value, *reader)) return false;
  const int pool_index = index_of(c, *pool);
  reader = pool;
  value = pool->inputs[0];
  take_relu();
  auto it = c.producer.find(value);
  if (it == c.producer.end() || !only_read_by(c, value, *reader)) return false;
  size_t bi = static_cast<size_t>(it->second);
  const Node* bn = nullptr;
  if (c.graph.nodes[bi].op_type == "BatchNormalization") {  // Note [int8 batchnorm]
    const Node* conv = produced_by(c, c.graph.nodes[bi].inputs[0], "Conv");
    if (!conv || foldable_bn(c, *conv) != &c.graph.nodes[bi]) return false;
    bn = &c.graph.nodes[bi];
    consumed.push_back(static_cast<int>(bi));
    bi = static_cast<size_t>(index_of(c, *conv));
  }
  std::optional<Node> fused = int8_layer(c, c.graph.nodes[bi]);
  if (!fused || dead[bi] || dead[static_cast<size_t>(pool_index)]) return false;
  for (int i : consumed) {
    if (dead[static_cast<size_t>(i)]) return false;
  }
  fused->inputs[6] = q.inputs[1];
  fused->inputs[7] = q.inputs[2];
  if (bn) attach_bn(c, *bn, *fused);
  while (!fused->inputs.empty() && fused->inputs.back().empty()) fused->inputs.pop_back();
  if (relu) fused->attrs["relu"] = int64_t{1};
  const std::string inner = fresh_value(c, c.graph.nodes[bi].outputs[0] + "_int8");
  fused->outputs = {inner};
  Node int8_pool = max_pool_on(*pool, inner, q.outputs);
  if (!backend_can_run(options, *fused) || !backend_can_run(options, int8_pool)) return false;
  c.producer[inner] = static_cast<int>(bi);
  c.graph.nodes[bi] = std::move(*fused);  // at the layer's place: its inputs are x_q and constants
  c.graph.nodes[static_cast<size_t>(pool_index)] = std::move(int8_pool);
  for (int i : consumed) dead[static_cast<size_t>(i)] = true;
  dead[qi] = true;
  return true;
}

// Note [int8 float output]: the layer at node bi, read through DequantizeLinears, whatever reads
// it, as the float-output int8 layer at its own place; a Relu that alone reads it joins.
bool try_fuse_float(Context& c, size_t bi, const PassOptions& options, std::vector<bool>& dead) {
  const Node& base = c.graph.nodes[bi];
  if (dead[bi] || !base.domain.empty() || (base.op_type != "Conv" && base.op_type != "Gemm" && base.op_type != "MatMul")) {
    return false;
  }
  std::optional<Node> fused = int8_layer(c, base);
  if (!fused) return false;
  fused->outputs = base.outputs;
  const Node* bn = foldable_bn(c, base);  // Note [int8 batchnorm]
  if (bn && dead[static_cast<size_t>(index_of(c, *bn))]) bn = nullptr;
  if (bn) {
    attach_bn(c, *bn, *fused);
    fused->outputs = bn->outputs;
  }
  while (!fused->inputs.empty() && fused->inputs.back().empty()) fused->inputs.pop_back();
  const int r = sole_consumer(c.graph, fused->outputs[0]);
  const Node* relu = r >= 0 ? &c.graph.nodes[static_cast<size_t>(r)] : nullptr;
  if (relu && (dead[static_cast<size_t>(r)] || relu->op_type != "Relu" || !relu->domain.empty() || relu->outputs.size() != 1)) {
    relu = nullptr;
  }
  if (relu) {
    fused->attrs["relu"] = int64_t{1};
    fused->outputs = relu->outputs;
  }
  if (!backend_can_run(options, *fused)) return false;
  if (relu) dead[static_cast<size_t>(r)] = true;
  if (bn) dead[static_cast<size_t>(index_of(c, *bn))] = true;
  c.graph.nodes[bi] = std::move(*fused);
  return true;
}

}  // namespace

int fuse_qdq_int8(Graph& graph, const PassOptions& options) {
  if (std::none_of(graph.nodes.begin(), graph.nodes.end(), [](const Node& n) { return n.op_type == "QuantizeLinear"; })) {
    return 0;
  }
  std::map<std::string, TensorInfo> types, types2;
  try {
    types = value_types(graph, 1);
    types2 = value_types(graph, 2);
  } catch (const std::exception&) {
    return 0;  // a graph the shape inference cannot type at these sizes: leave it as it is
  }
  Context c{graph, types, types2, {}};
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& o : graph.nodes[i].outputs) c.producer[o] = static_cast<int>(i);
  }
  std::vector<bool> dead(graph.nodes.size(), false);
  int fused = 0;
  for (bool residual : {true, false}) {  // residual joins first: their Conv's QuantizeLinear is theirs
    for (size_t i = 0; i < graph.nodes.size(); ++i) fused += try_fuse(c, i, residual, options, dead) ? 1 : 0;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) fused += try_fuse_pooled(c, i, options, dead) ? 1 : 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) fused += try_fuse_float(c, i, options, dead) ? 1 : 0;
  if (fused == 0) {  // a backend without the int8 layers (a device) keeps its pools float too
    drop_unused_constants(graph);  // attach_bn's, where backend_can_run then refused
    return 0;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) fused += try_int8_max_pool(c, i, options, dead) ? 1 : 0;
  erase_nodes(graph, dead);
  drop_unread_dequantize(graph);
  drop_unused_constants(graph);
  return fused;
}

}  // namespace dnnx
