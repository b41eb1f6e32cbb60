// Note [channels last]: on a backend whose convolutions are faster with channels-last data
// (CUDA at tf32 and fp16: cuDNN's tensor-core kernels read NHWC, and a 1x1 conv in NHWC is one
// GEMM), the 4-D window ops run channels-last between the model's edges. Like half storage,
// values carry the layout: a value the pass makes channels-last has the stored shape
// [N, H, W, C] in the graph, and the node computing it becomes "<op>@NHWC" (ops/layout/channels_last.h).
// The rewrite, in node order:
//   - a window op with a channels-last form the backend can run (channels_last_inputs, and
//     Backend::unsupported_reason of the renamed node is "") reads its data inputs channels-last:
//     a channels-last value as it is, a filter initializer as a permuted copy made here, any
//     other value through one Transpose (perm 0,2,3,1) shared by its readers; its output 0 is
//     channels-last;
//   - an elementwise op (the activations, Clip with its scalar bounds, Cast, and same-shape Add/Sub/Mul/Div/Max/Min/Sum)
//     whose float inputs are all channels-last stays as it is, and its outputs are channels-last:
//     elementwise arithmetic does not care about the order of the elements;
//   - any other node reads a channels-last input through a Transpose back (perm 0,3,1,2), or a
//     Reshape (a view, no copy) when H = W = 1, where both orders are the same bytes;
//   - a graph output left channels-last is made under its own name by a last Transpose back.
// The caller sees ONNX's layout everywhere; the plan shows the @NHWC layers and the Transposes.
//
// Note [narrow regions]: at tf32 the channels-last path wins by tensor-op convolutions, and pays
// for them with the layout conversions at its region's edges; a conv too narrow for tensor-core
// tiles gains little and loses the NCHW path's own kernels (the direct conv and conv+pool kernels
// for small layers, fp32 FMA, which tf32 permits). Measured on an H200 on 2026-12-03
// (bench/probes/probe_precision_layout.py, GPU time per run from a replayed graph): LeNet (convs
// of 1 -> 20 and 20 -> 50 channels) at tf32 took 56.8 us at batch 1 and 259.2 us at batch 1024
// channels-last, against 24.9 and 185.5 us in ONNX's layout (fp32: 189.3 us at batch 1024). So a
// region (the ops the rewrite would make channels-last, joined where one reads another's
// channels-last output) is kept only where one of its convs has `min_channels` or more input
// channels per group and filters (Backend::channels_last_min_channels: 32 on CUDA at tf32, where
// every region of ResNet-50 qualifies and LeNet's does not); the window ops of any other region
// keep ONNX's layout, and plan() says why. A dry run of the rewrite finds the regions first.
//
// Note [padded channels]: cuDNN's NHWC tensor-core kernels read channels in 16-byte vectors (8
// half or 4 float32/tf32 elements); a conv whose input channels are not a multiple of that falls
// to slow kernels. ResNet-50's stem (3 -> 64 channels, 7x7 stride 2, batch 256) took 3.1 ms of
// an 8.9 ms fp16 run in NHWC (IMPLICIT_GEMM; bench/probes/probe_conv_layouts/stem.py), where
// PyTorch pads its channels to 8 and takes 0.4 ms. So where the backend names a channel multiple
// (Backend::channels_last_channel_multiple), a channels-last conv of one group whose filter is
// a constant with C input channels, C not a multiple, reads X padded with zeros to the next
// multiple C' and a filter permuted and zero-padded to [K, R, S, C'] here: the added channels
// multiply zeros by zeros, so the output is the same sums. X in ONNX's layout goes through one
// "Transpose+Pad" (ops/layout/channels_last.h) where the backend runs it: a Transpose and then a Pad
// took 0.24 + 0.94 ms of ResNet-50's 7.9 ms fp16 run (batch 256) on the generic gather and pad
// kernels; else (and for a value already channels-last) through a Pad of its channel axis (on
// CUDA a kernel of its own, Note [padded rows]: ShuffleNetV2's and RexNet's channel counts). The
// value is named "<x>/nhwc/c<C'>" in the plan.
//
// Note [space to depth]: a stride-2 conv of few channels is still slow padded. ResNet-50's stem
// (7x7, stride 2, 3 -> 64, batch 256) took 1.22 ms at fp16, 1.71 at bf16 and 1.39 at tf32 with
// its channels padded (bench/probes/probe_stem_forms.py, H200, 2026-12-03), while the same sums as
// a 4x4 stride-1 conv over the padded input's 2x2 blocks taken as 16 channels took 0.65, 0.65 and
// 0.91 ms (12 channels at tf32: 1.65). So a stride-2 conv of at most 4 input channels (4C <= 16)
// on a model input with known spatial dims, where the two output sizes agree, reads one
// "Transpose+SpaceToDepth" of X (ops/layout/channels_last.h: its pads applied there, the blocks as
// kSpaceToDepthChannels channels, zeros past 4C) and a filter rearranged here
// (space_to_depth_filter), and runs with stride 1, no pads and a window of ceil(k / 2): each
// output sums the same products, with zeros for the window's added taps. The value is named
// "<x>/nhwc/s2d".
//
// Note [channels-last forms]: on the CPU (Backend::channels_last_forms) the regions also keep,
// channels-last:
//   - float32 values only (its channels-last kernels are float32; float64 and half models keep
//     ONNX's layout);
//   - more unary ops (HardSwish, HardSigmoid, Gelu, Erf, Softplus, ...: no axis, no layout);
//   - binary ops (Add, Sub, Mul, Div, Max, Min, Sum, Pow, PRelu) whose inputs are channels-last
//     4-D values of any broadcastable shapes (a squeeze-and-excitation gate [N, 1, 1, C] times
//     [N, H, W, C]: broadcasting commutes with permuting every operand alike), or constants,
//     which are padded to 4-D on the left and permuted here (a per-channel [C, 1, 1] scale becomes
//     [1, 1, 1, C]; a scalar stays as it is);
//   - Concat and Split on the channel axis, as the same op on axis 3 (DenseNet's, GoogLeNet's
//     and SqueezeNet's channel concatenations);
//   - the model's own Transposes: perm [0, 2, 3, 1] of a channels-last value is that value's
//     bytes (an Identity, a view), and perm [0, 3, 1, 2] of a 4-D value makes a channels-last value
//     of the same bytes (ConvNeXt's blocks permute to NHWC for LayerNormalization and the MLP and
//     back, around a depthwise conv that now reads NHWC itself: no copy is left);
//   - Slice of the channel axis (a constant `axes` of [1]), as the same Slice of axis 3
//     (ShuffleNet's halves);
//   - the channel shuffle (Note [channel shuffle]);
//   - ReduceMean over H and W (timm's squeeze-and-excitation gates, x.mean((2, 3), keepdim=True),
//     and pooled heads) as GlobalAveragePool@NHWC, the same mean; without keepdims its
//     [N, 1, 1, C] output is read as [N, C] through a Reshape (a view). RexNet-100 converted
//     its SE gates' inputs back to ONNX's layout 13 times for this alone.
//
// Note [channel shuffle]: ShuffleNet's shuffle of a channels-last value x, Reshape [N, C, H, W] ->
// [N, g, C/g, H, W], Transpose [0, 2, 1, 3, 4], Reshape back to [N, C, H, W], runs as the same
// steps on x's stored [N, H, W, C]: Reshape to [N, H, W, g, C/g], Transpose [0, 1, 2, 4, 3],
// Reshape to [N, H, W, C] (each Reshape a view). Without it each of ShuffleNetV2's 16 units
// converted its Concat's output back to ONNX's layout and the next unit's convs converted it again.
// The 5-D values between ("grouped": stored [N, H, W, a, b] for ONNX's [N, a, b, H, W]) are kept
// apart from the 4-D channels-last ones; any other reader gets one Transpose back (perm
// [0, 3, 4, 1, 2]). The shapes are checked with the symbolic dims at 1 and at 2, so that g and
// C/g are the model's constants and N, H and W are carried through.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>

#include "runtime/passes/passes.h"
#include "runtime/passes/rewrite.h"
#include "ops/layout/channels_last.h"

namespace dnnx {

namespace {

constexpr int64_t kSpaceToDepthChannels = 16;  // Note [space to depth]: 16 measured faster than 12 at tf32

const std::set<std::string>& elementwise_unary() {
  static const std::set<std::string> ops = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Clip", "Cast", "Identity"};
  return ops;
}

const std::set<std::string>& elementwise_binary() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"};
  return ops;
}

// Note [channels-last forms]: the unary ops and binary ops added with graph_ops.
const std::set<std::string>& graph_ops_unary() {
  static const std::set<std::string> ops = {"HardSwish", "HardSigmoid", "Softplus", "Softsign", "Gelu", "Erf",
                                            "Neg",       "Abs",         "Exp",      "Log",      "Sqrt", "Reciprocal",
                                            "Selu",      "Mish",        "ThresholdedRelu", "Celu", "Floor", "Ceil"};
  return ops;
}

const std::set<std::string>& graph_ops_binary() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Pow", "PRelu"};
  return ops;
}

class ChannelsLastRewrite {
 public:
  // types, types2: the graph's value types with symbolic dims as 1 and as 2 (value_types), read
  // before the rewrite starts. dry: decides and records regions (Note [narrow regions]) but
  // changes nothing.
  ChannelsLastRewrite(Graph& graph, const std::function<bool(const Node&)>& can_run,
                      const std::map<std::string, TensorInfo>& types, const std::map<std::string, TensorInfo>& types2,
                      int64_t channel_multiple = 1, bool dry = false, const ChannelsLastForms& forms = {})
      : graph_(graph), can_run_(can_run), types_(types), types2_(types2), fresh_(graph),
        channel_multiple_(channel_multiple), forms_(forms), dry_(dry),
        parent_(dry ? graph.nodes.size() : 0) {
    std::iota(parent_.begin(), parent_.end(), size_t{0});
  }

  // The dry run's region bookkeeping: the index in the graph's node order of the node added next.
  void at(size_t index) { current_ = index; }

  // After a dry run: the converted window ops whose region has no conv of `min_channels` or more
  // input channels per group and filters.
  std::set<size_t> narrow_windows(int64_t min_channels) {
    std::set<size_t> wide_roots;
    for (size_t i : windows_) {
      if (wide(i, min_channels)) wide_roots.insert(root(i));
    }
    std::set<size_t> narrow;
    for (size_t i : windows_) {
      if (!wide_roots.count(root(i))) narrow.insert(i);
    }
    return narrow;
  }

  // Whether `node` becomes "<op>@NHWC"; if so, adds it.
  bool add_window(const Node& node) {
    const std::vector<size_t>* permuted = channels_last_inputs(node.op_type);
    if (!permuted || node.outputs.size() != 1) return false;
    if (node.op_type == "Int8Conv") {
      if (!int8_conv_fits(node)) return false;
    } else {
      if (!is_float4d(node.has_input(0) ? node.inputs[0] : "")) return false;
      for (size_t i : *permuted) {
        if (node.has_input(i) && !is_float4d(node.inputs[i])) return false;
      }
    }
    Node out = node;
    out.op_type += kChannelsLastSuffix;
    if (!can_run_(out)) return false;
    ++converted_;
    if (dry_) {
      windows_.push_back(current_);
      const size_t w = filter_input(node.op_type);
      filters_[current_] = node.has_input(w) && permuted->size() > 1 ? types_.at(node.inputs[w]).shape : Shape{};
      if (!filters_[current_].empty() && node.attr_int("group", 1) == filters_[current_][0]) depthwise_.insert(current_);
      join(node, *permuted);
      return true;
    }
    const bool blocks = space_to_depth(node, out);  // Note [space to depth]: X, W and the conv's attributes
    const int64_t channels = blocks ? 0 : padded_channels(node);  // Note [padded channels]; 0: as they are
    for (size_t i : *permuted) {
      if (!node.has_input(i) || (blocks && i < 2)) continue;
      if (channels && i == 0) {
        out.inputs[0] = padded_input(node.inputs[0], channels);
      } else if (channels && i == 1) {
        out.inputs[1] = fresh_(node.inputs[1] + "/nhwc/c" + std::to_string(channels));
        graph_.constants[out.inputs[1]] = padded_filter(*find_constant(graph_, node.inputs[1]), channels);
      } else {
        out.inputs[i] = channels_last(node.inputs[i]);
      }
    }
    last_.insert(out.outputs[0]);
    nodes_.push_back(std::move(out));
    return true;
  }

  // Whether `node` is elementwise over channels-last inputs only; if so, adds it unchanged.
  bool add_elementwise(const Node& node) {
    const bool unary = elementwise_unary().count(node.op_type) != 0 || per_tensor_quantize(node);
    if (!unary && !elementwise_binary().count(node.op_type)) return false;
    const size_t data_inputs = unary ? 1 : node.inputs.size();
    if (node.inputs.size() < data_inputs || data_inputs == 0) return false;
    for (size_t i = 0; i < data_inputs; ++i) {
      if (!last_.count(node.inputs[i])) return false;
      for (const auto* types : {&types_, &types2_}) {  // the same shape for every size of the symbolic dims
        if (types->at(node.inputs[i]).shape != types->at(node.inputs[0]).shape) return false;
      }
    }
    for (size_t i = data_inputs; i < node.inputs.size(); ++i) {
      if (last_.count(node.inputs[i])) return false;  // e.g. Clip's bounds: scalars, never 4-D values
    }
    if (dry_) {
      std::vector<size_t> all(data_inputs);
      for (size_t i = 0; i < data_inputs; ++i) all[i] = i;
      join(node, all);
      return true;
    }
    for (const std::string& o : node.outputs) {
      if (!o.empty()) last_.insert(o);
    }
    nodes_.push_back(node);
    return true;
  }

  // Note [channels-last forms]: whether `node` stays channels-last under forms_.graph_ops (more
  // unary ops, broadcasting binary ops, Concat and Split on channels, the model's Transposes);
  // if so, adds it.
  bool add_graph_op(const Node& node) {
    if (!forms_.graph_ops || node.outputs.empty()) return false;
    if (node.op_type == "Transpose") return add_transpose(node);
    if (node.op_type == "Concat" || node.op_type == "Split") return forms_.channel_concat && add_on_channels(node);
    if (node.op_type == "Slice") return forms_.channel_concat && add_channel_slice(node);
    if (node.op_type == "Reshape") return forms_.channel_concat && add_shuffle_reshape(node);
    if (node.op_type == "Shape") return add_shape(node);
    if (node.op_type == "ReduceMean") return forms_.pixel_means && add_mean_over_pixels(node);
    const bool unary = graph_ops_unary().count(node.op_type) != 0;
    if (!unary && !graph_ops_binary().count(node.op_type)) return false;
    std::vector<size_t> lasts;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      if (in.empty()) continue;
      if (last_.count(in)) {
        lasts.push_back(i);
        continue;
      }
      // a constant operand of a binary op, at most 4-D, is permuted; nothing else may be plain
      const ConstTensor* c = unary ? nullptr : find_constant(graph_, in);
      if (!c || c->info.shape.size() > 4 || !is_floating(c->info.dtype)) return false;
    }
    if (lasts.empty() || (unary && node.inputs.size() != 1)) return false;
    Node out = node;
    if (!dry_) {
      for (size_t i = 0; i < out.inputs.size(); ++i) {
        if (!out.inputs[i].empty() && !last_.count(out.inputs[i])) out.inputs[i] = channels_last_operand(out.inputs[i]);
      }
    }
    keep(out, lasts);
    return true;
  }

  // Any other node: channels-last inputs back to ONNX's layout first.
  void add_other(Node node) {
    if (dry_) return;
    for (std::string& in : node.inputs) {
      if (last_.count(in) || grouped_.count(in)) in = channels_first(in);
    }
    nodes_.push_back(std::move(node));
  }

  int converted() const { return converted_; }

  // Graph outputs left channels-last come back under their own names; the graph takes the nodes.
  void finish() {
    for (const std::string& out : graph_.outputs) {
      if (!last_.count(out) && !grouped_.count(out)) continue;
      const std::string inner = fresh_(out + "/nhwc");
      rename_output_inside(nodes_, out, inner);
      nodes_.push_back(transpose(inner, out, grouped_.count(out) ? grouped_first_perm() : channels_first_perm()));
    }
    graph_.nodes = std::move(nodes_);
    drop_unused_constants(graph_);
  }

 private:
  // `node` as it is, its outputs channels-last (the dry run joins the regions of inputs `from`);
  // with `grouped`, its outputs are grouped 5-D values (Note [channel shuffle]).
  void keep(const Node& node, const std::vector<size_t>& from, bool grouped = false) {
    if (dry_) {
      join(node, from, grouped);
      return;
    }
    for (const std::string& o : node.outputs) {
      if (!o.empty()) (grouped ? grouped_ : last_).insert(o);
    }
    nodes_.push_back(node);
  }

  // Slice of a channels-last value whose constant `axes` is the channel axis alone: the same
  // Slice of axis 3 (starts, ends and steps as they are).
  bool add_channel_slice(const Node& node) {
    if (node.inputs.size() < 4 || node.outputs.size() != 1 || !last_.count(node.inputs[0])) return false;
    const ConstTensor* axes = find_constant(graph_, node.inputs[3]);
    if (!axes || numel(axes->info.shape) != 1 || !is_integer(axes->info.dtype)) return false;
    const int64_t axis = axes->to_int64()[0];
    if (axis != 1 && axis != -3) return false;
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (last_.count(node.inputs[i]) || grouped_.count(node.inputs[i])) return false;
    }
    Node out = node;
    if (!dry_) out.inputs[3] = index_constant(node.inputs[3] + "/nhwc", {3}, axes->info.dtype);
    keep(out, {0});
    return true;
  }

  // Note [channel shuffle]: a Reshape of a channels-last [N, C, H, W] to [N, g, C/g, H, W], or of
  // a grouped [N, a, b, H, W] to [N, a*b, H, W].
  bool add_shuffle_reshape(const Node& node) {
    if (node.inputs.size() != 2 || node.outputs.size() != 1 || node.attr_int("allowzero", 0) != 0) return false;
    const std::string &in = node.inputs[0], &out = node.outputs[0];
    const bool split = last_.count(in) != 0;
    if (!split && !grouped_.count(in)) return false;
    if (!types_.count(out) || !types2_.count(out) || !types_.count(in) || !types2_.count(in)) return false;
    for (const auto* types : {&types_, &types2_}) {
      const Shape &x = types->at(in).shape, &y = types->at(out).shape;
      const bool fits = split ? y.size() == 5 && x.size() == 4 && y[0] == x[0] && y[1] * y[2] == x[1] &&
                                    y[3] == x[2] && y[4] == x[3]
                              : y.size() == 4 && x.size() == 5 && y[0] == x[0] && y[1] == x[1] * x[2] &&
                                    y[2] == x[3] && y[3] == x[4];
      if (!fits) return false;
    }
    const Shape &y = types_.at(out).shape, &y2 = types2_.at(out).shape;
    if (y[1] != y2[1] || (split && y[2] != y2[2])) return false;  // g and C/g: the model's constants
    Node stored = node;
    stored.attrs.erase("allowzero");
    if (!dry_) {  // 0: the dim copied from the input (N, H, W)
      const std::vector<int64_t> dims = split ? std::vector<int64_t>{0, 0, 0, y[1], y[2]}
                                              : std::vector<int64_t>{0, 0, 0, y[1]};
      stored.inputs[1] = index_constant(out + "/nhwc/shape", dims, DType::Int64);
    }
    keep(stored, {0}, split);
    return true;
  }

  // Note [channel shuffle]: the Transpose [0, 2, 1, 3, 4] of a grouped value, as [0, 1, 2, 4, 3]
  // of its stored dims.
  bool add_group_transpose(const Node& node) {
    if (node.inputs.empty() || !grouped_.count(node.inputs[0]) || node.outputs.size() != 1) return false;
    if (node.attr_ints("perm", {}) != std::vector<int64_t>{0, 2, 1, 3, 4}) return false;
    Node out = node;
    out.attrs["perm"] = std::vector<int64_t>{0, 1, 2, 4, 3};
    keep(out, {0}, true);
    return true;
  }

  // An integer constant (a Reshape's shape, a Slice's axes) of `dtype` (int64 or int32), under a
  // fresh name from `base`.
  std::string index_constant(const std::string& base, const std::vector<int64_t>& values, DType dtype) {
    auto c = std::make_shared<ConstTensor>();
    c->info = TensorInfo{{static_cast<int64_t>(values.size())}, dtype};
    c->data.resize(c->info.bytes());
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == DType::Int32) {
        c->as_mut<int32_t>()[i] = static_cast<int32_t>(values[i]);
      } else {
        c->as_mut<int64_t>()[i] = values[i];
      }
    }
    const std::string name = fresh_(base);
    graph_.constants[name] = std::move(c);
    return name;
  }

  static std::vector<int64_t> grouped_first_perm() { return {0, 3, 4, 1, 2}; }

  // Note [channels-last forms]: ReduceMean of a channels-last value over axes {2, 3} (constant,
  // as the attribute or, from opset 18, the input) as GlobalAveragePool@NHWC.
  bool add_mean_over_pixels(const Node& node) {
    if (node.inputs.empty() || !last_.count(node.inputs[0]) || node.outputs.size() != 1) return false;
    if (!is_float4d(node.inputs[0])) return false;  // the pool's types (an int8 chain's values stay as they are)
    std::vector<int64_t> axes;
    if (node.has_input(1)) {
      const ConstTensor* c = find_constant(graph_, node.inputs[1]);
      if (!c || !is_integer(c->info.dtype)) return false;
      axes = c->to_int64();
    } else {
      axes = node.attr_ints("axes", {});
    }
    for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
    std::sort(axes.begin(), axes.end());
    if (axes != std::vector<int64_t>{2, 3}) return false;
    Node pool;
    pool.name = node.name;
    pool.op_type = std::string("GlobalAveragePool") + kChannelsLastSuffix;
    pool.inputs = {node.inputs[0]};
    pool.outputs = node.outputs;
    pool.opset = graph_.opset;
    if (!can_run_(pool)) return false;
    const bool keepdims = node.attr_int("keepdims", 1) != 0;
    if (dry_) {
      if (keepdims) join(node, {0});
      return true;
    }
    if (keepdims) {  // [N, 1, 1, C]: channels-last (and ONNX's [N, C, 1, 1] bytes)
      keep(pool, {0});
      return true;
    }
    pool.outputs = {fresh_(node.outputs[0] + "/nhwc")};
    const int64_t channels = types_.at(node.inputs[0]).shape[1];
    Node view;
    view.name = fresh_(node.name + "/flat");
    view.op_type = "Reshape";
    view.inputs = {pool.outputs[0], index_constant(node.outputs[0] + "/nhwc/shape", {0, channels}, DType::Int64)};
    view.outputs = node.outputs;
    view.opset = graph_.opset;
    nodes_.push_back(std::move(pool));
    nodes_.push_back(std::move(view));
    return true;
  }

  // Shape of a channels-last (or grouped) value: the stored shape's dims taken in ONNX's order by
  // a Gather, instead of a Transpose back for a reader that looks at the shape alone (ShuffleNet
  // asks each Concat's output for its N, C, H and W). Both fold at plan time.
  bool add_shape(const Node& node) {
    if (node.inputs.size() != 1 || node.outputs.size() != 1 || node.attrs.count("start") || node.attrs.count("end")) {
      return false;
    }
    const std::string& in = node.inputs[0];
    const bool grouped = grouped_.count(in) != 0;
    if (!grouped && !last_.count(in)) return false;
    if (dry_) return true;  // its output is a plain value: no region grows
    Node stored = node;
    stored.outputs = {fresh_(node.outputs[0] + "/nhwc")};
    Node gather;
    gather.name = fresh_(node.name + "/onnx_order");
    gather.op_type = "Gather";
    gather.inputs = {stored.outputs[0], index_constant(node.outputs[0] + "/nhwc/order",
                                                       grouped ? grouped_first_perm() : channels_first_perm(),
                                                       DType::Int64)};
    gather.outputs = node.outputs;
    gather.attrs["axis"] = int64_t{0};
    gather.opset = graph_.opset;
    nodes_.push_back(std::move(stored));
    nodes_.push_back(std::move(gather));
    return true;
  }

  // Concat on the channel axis with a channels-last input (the others 4-D float values, read
  // through their shared Transpose), Split of a channels-last value: the same op on axis 3.
  bool add_on_channels(const Node& node) {
    const int64_t axis = node.attr_int("axis", 0);
    if (axis != 1 && axis != -3) return false;
    const size_t data_inputs = node.op_type == "Concat" ? node.inputs.size() : 1;
    std::vector<size_t> lasts;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      const bool channels_last_value = !in.empty() && last_.count(in);
      if (i >= data_inputs) {
        if (channels_last_value) return false;  // Split's sizes: 1-D
        continue;
      }
      if (channels_last_value) {
        lasts.push_back(i);
      } else if (in.empty() || !is_float4d(in)) {
        return false;
      }
    }
    if (lasts.empty()) return false;
    Node out = node;
    out.attrs["axis"] = int64_t{3};
    if (!dry_) {
      for (size_t i = 0; i < data_inputs; ++i) out.inputs[i] = channels_last(out.inputs[i]);
    }
    keep(out, lasts);
    return true;
  }

  // The model's own Transposes (Note [channels-last forms]): to [N, H, W, C] from a channels-last
  // value, or back from a plain 4-D value, each an Identity (a view) of the same bytes.
  bool add_transpose(const Node& node) {
    if (forms_.channel_concat && add_group_transpose(node)) return true;
    const std::vector<int64_t> perm = node.attr_ints("perm", {});
    const std::string& in = node.inputs.empty() ? std::string() : node.inputs[0];
    const bool to_last = perm == channels_last_perm() && last_.count(in);
    const bool from_last = perm == channels_first_perm() && !last_.count(in) && is_float4d(in) &&
                           !find_constant(graph_, in) && node.outputs.size() == 1;
    if (!to_last && !from_last) return false;
    Node out = node;
    out.op_type = "Identity";
    out.attrs.clear();
    if (to_last) {  // its output is a plain value: the region ends here
      if (!dry_) nodes_.push_back(std::move(out));
      return true;
    }
    keep(out, {});
    return true;
  }

  // A constant operand of a channels-last binary op: padded to 4-D on the left and permuted
  // (a scalar as it is); one per constant.
  std::string channels_last_operand(const std::string& name) {
    const ConstTensor* c = find_constant(graph_, name);
    return !c || numel(c->info.shape) == 1 ? name : channels_last(name);
  }

  // Dry run: the current node joins the regions of the channels-last values among `inputs`;
  // its outputs are channels-last values of its region.
  void join(const Node& node, const std::vector<size_t>& inputs, bool grouped = false) {
    for (size_t i : inputs) {
      if (!node.has_input(i)) continue;
      auto it = producer_.find(node.inputs[i]);
      if (it != producer_.end()) parent_[root(it->second)] = root(current_);
    }
    for (const std::string& o : node.outputs) {
      if (o.empty()) continue;
      (grouped ? grouped_ : last_).insert(o);
      producer_[o] = current_;
    }
  }

  size_t root(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }

  // A conv whose filter [K, C/group, ...] has min_channels or more on both counts (with
  // forms_.wide_depthwise, a depthwise conv of min_channels or more channels too).
  bool wide(size_t i, int64_t min_channels) const {
    const Shape& w = filters_.at(i);
    if (w.size() != 4 || w[0] < min_channels) return false;
    return w[1] >= min_channels || (forms_.wide_depthwise && w[1] == 1 && depthwise_.count(i));
  }

  // The window op's filter input: Int8Conv's is its fourth (after x and its scale and zero point).
  static size_t filter_input(const std::string& op) { return op == "Int8Conv" ? 3 : 1; }

  // Note [int8 nhwc conv] (backends/cpu/quant/int8_conv_nhwc_cpu.h): what the channels-last int8
  // conv takes. 8-bit X [N, C, H, W] with C a multiple of 4, a constant int8 W [M, C, kh, kw] whose
  // zero points are 0, one group, an 8-bit residual.
  bool int8_conv_fits(const Node& node) const {
    if (!forms_.int8_convs || node.attr_int("group", 1) != 1 || !node.has_input(3)) return false;
    auto type = [&](size_t i) -> const TensorInfo* {
      auto it = node.has_input(i) ? types_.find(node.inputs[i]) : types_.end();
      return it == types_.end() ? nullptr : &it->second;
    };
    const TensorInfo* x = type(0);
    const ConstTensor* w = find_constant(graph_, node.inputs[3]);
    if (!x || (x->dtype != DType::UInt8 && x->dtype != DType::Int8) || x->shape.size() != 4 || x->shape[1] % 4 != 0) {
      return false;
    }
    if (!w || w->info.dtype != DType::Int8 || w->info.shape.size() != 4 || w->info.shape[1] != x->shape[1]) return false;
    if (node.has_input(5)) {  // w_zero_point
      const ConstTensor* zp = find_constant(graph_, node.inputs[5]);
      if (!zp || std::any_of(zp->data.begin(), zp->data.end(), [](uint8_t b) { return b != 0; })) return false;
    }
    if (node.has_input(12)) {  // the residual z
      const TensorInfo* z = type(12);
      if (!z || (z->dtype != DType::UInt8 && z->dtype != DType::Int8) || z->shape.size() != 4) return false;
    }
    return true;
  }

  // With forms_.int8_convs: QuantizeLinear or DequantizeLinear of one scale and zero point (the
  // whole tensor's), elementwise whatever the layout.
  bool per_tensor_quantize(const Node& node) const {
    if (!forms_.int8_convs || (node.op_type != "QuantizeLinear" && node.op_type != "DequantizeLinear")) return false;
    if (node.inputs.size() < 2 || node.outputs.size() != 1) return false;
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      if (node.inputs[i].empty()) continue;
      const ConstTensor* c = find_constant(graph_, node.inputs[i]);
      if (!c || numel(c->info.shape) != 1) return false;
    }
    return true;
  }

  bool is_float4d(const std::string& name) const {
    auto it = types_.find(name);
    if (name.empty() || it == types_.end() || it->second.shape.size() != 4) return false;
    return forms_.float32_only ? it->second.dtype == DType::Float32 : is_floating(it->second.dtype);
  }

  // The channels-last form of a value in ONNX's layout: a permuted initializer, or a Transpose.
  std::string channels_last(const std::string& name) {
    if (last_.count(name)) return name;
    auto memo = to_last_.find(name);
    if (memo != to_last_.end()) return memo->second;
    const std::string out = fresh_(name + "/nhwc");
    if (const ConstTensor* c = find_constant(graph_, name)) {
      graph_.constants[out] = permuted_constant(*c);
    } else {
      nodes_.push_back(transpose(name, out, channels_last_perm()));
    }
    return to_last_[name] = out;
  }

  // A channels-last value in ONNX's layout: a Reshape (view) when H = W = 1 for every batch
  // size, else a Transpose; one per value.
  std::string channels_first(const std::string& name) {
    auto memo = to_first_.find(name);
    if (memo != to_first_.end()) return memo->second;
    const std::string out = fresh_(name + "/nchw");
    if (grouped_.count(name)) {
      nodes_.push_back(transpose(name, out, grouped_first_perm()));
      return to_first_[name] = out;
    }
    const Shape& s = types_.at(name).shape;  // ONNX's [N, C, H, W] (stored [N, H, W, C])
    const Shape& s2 = types2_.at(name).shape;
    const bool unit_window = s[2] == 1 && s[3] == 1 && s2[2] == 1 && s2[3] == 1 && s[1] == s2[1];
    if (unit_window && graph_.opset >= 5) {
      nodes_.push_back(reshape(name, out, s[1]));
    } else {
      nodes_.push_back(transpose(name, out, channels_first_perm()));
    }
    return to_first_[name] = out;
  }

  // A constant of rank 4, or less (padded with 1s on the left: a [C, 1, 1] scale), as [N, H, W, C].
  static ConstTensorPtr permuted_constant(const ConstTensor& c) {
    if (c.info.shape.size() == 4) return padded_filter(c, c.info.shape[1]);
    ConstTensor padded = c;
    padded.info.shape.insert(padded.info.shape.begin(), 4 - c.info.shape.size(), 1);
    return padded_filter(padded, padded.info.shape[1]);
  }

  Node transpose(const std::string& from, const std::string& to, std::vector<int64_t> perm) {
    Node n;
    n.name = fresh_(to + "/transpose");
    n.op_type = "Transpose";
    n.inputs = {from};
    n.outputs = {to};
    n.attrs["perm"] = std::move(perm);
    n.opset = graph_.opset;
    return n;
  }

  // [N, 1, 1, C] -> [N, C, 1, 1] as a Reshape to [0, C, 1, 1] (0: N copied from the input).
  Node reshape(const std::string& from, const std::string& to, int64_t channels) {
    Node n;
    n.name = fresh_(to + "/reshape");
    n.op_type = "Reshape";
    n.inputs = {from, index_constant(to + "/shape", {0, channels, 1, 1}, DType::Int64)};
    n.outputs = {to};
    n.opset = graph_.opset;
    return n;
  }

  // Note [space to depth]: where `node` is a stride-2 conv of at most 4 input channels on a
  // model input whose spatial dims are known, `out` reads X's 2x2 blocks as channels (one
  // Transpose+SpaceToDepth, where the backend runs it), a filter rearranged to match, and
  // becomes a stride-1 conv without pads of half the window (rounded up).
  bool space_to_depth(const Node& node, Node& out) {
    if (channel_multiple_ <= 1 || !node.has_input(1) || node.attr_int("group", 1) != 1) return false;
    if (node.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
    if (node.attr_ints("strides", {1, 1}) != std::vector<int64_t>{2, 2}) return false;
    if (node.attr_ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return false;
    const std::string& x = node.inputs[0];
    const ConstTensor* w = find_constant(graph_, node.inputs[1]);
    if (last_.count(x) || find_constant(graph_, x) || !w || w->info.shape.size() != 4) return false;
    const Shape& ws = w->info.shape;  // [K, C, kh, kw]
    const Shape &xs = types_.at(x).shape, &xs2 = types2_.at(x).shape;
    if (4 * ws[1] > kSpaceToDepthChannels || xs[1] != ws[1] || xs[2] != xs2[2] || xs[3] != xs2[3]) return false;
    const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) return false;
    for (int d = 0; d < 2; ++d) {  // the same output size: ceil(Hp / 2) - ceil(k / 2) + 1 = floor((Hp - k) / 2) + 1
      const int64_t padded = xs[2 + d] + pads[d] + pads[d + 2], k = ws[2 + d];
      if (k < 2 || padded < k || (padded + 1) / 2 - (k + 1) / 2 != (padded - k) / 2) return false;
    }
    Node blocks;
    blocks.op_type = kSpaceToDepthOp;
    blocks.inputs = {x};
    blocks.attrs["pads"] = pads;
    blocks.attrs["channels"] = kSpaceToDepthChannels;
    blocks.opset = graph_.opset;
    if (!can_run_(blocks)) return false;
    const std::string key = x + shape_str(pads);
    auto memo = to_blocks_.find(key);
    if (memo == to_blocks_.end()) {
      const std::string value = fresh_(x + "/nhwc/s2d");
      blocks.name = fresh_(value + "/space_to_depth");
      blocks.outputs = {value};
      nodes_.push_back(std::move(blocks));
      last_.insert(value);
      memo = to_blocks_.emplace(key, value).first;
    }
    out.inputs[0] = memo->second;
    out.inputs[1] = fresh_(node.inputs[1] + "/nhwc/s2d");
    graph_.constants[out.inputs[1]] = space_to_depth_filter(*w);
    out.attrs["kernel_shape"] = std::vector<int64_t>{(ws[2] + 1) / 2, (ws[3] + 1) / 2};
    out.attrs["strides"] = std::vector<int64_t>{1, 1};
    out.attrs["dilations"] = std::vector<int64_t>{1, 1};
    out.attrs["pads"] = std::vector<int64_t>{0, 0, 0, 0};
    return true;
  }

  // W [K, C, kh, kw] -> [K, ceil(kh / 2), ceil(kw / 2), kSpaceToDepthChannels] with
  // W'[k, i, j, (2 dy + dx) C + c] = W[k, c, 2i + dy, 2j + dx], zeros where 2i + dy or 2j + dx
  // falls outside the window and past 4C.
  static ConstTensorPtr space_to_depth_filter(const ConstTensor& c) {
    const Shape& s = c.info.shape;
    const int64_t C = s[1], oh = (s[2] + 1) / 2, ow = (s[3] + 1) / 2, depth = kSpaceToDepthChannels;
    return rearranged_filter(c, {s[0], oh, ow, depth}, [=](int64_t k, int64_t ch, int64_t r, int64_t q) {
      return ((k * oh + r / 2) * ow + q / 2) * depth + (2 * (r % 2) + q % 2) * C + ch;
    });
  }

  // A [K, C, R, S] filter's elements in a new constant of `shape` (zeros elsewhere): element
  // (k, c, r, q) at the flat index to(k, c, r, q).
  template <class To>
  static ConstTensorPtr rearranged_filter(const ConstTensor& c, const Shape& shape, To to) {
    auto t = std::make_shared<ConstTensor>();
    t->info = TensorInfo{shape, c.info.dtype};
    const size_t elem = dtype_size(c.info.dtype);
    t->data.assign(static_cast<size_t>(numel(shape)) * elem, 0);  // zero bits: +0 in every float type
    const Shape& s = c.info.shape;
    const int64_t K = s[0], C = s[1], R = s[2], S = s[3];
    for (int64_t k = 0; k < K; ++k)
      for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t q = 0; q < S; ++q) {
            const size_t from = static_cast<size_t>(((k * C + ch) * R + r) * S + q) * elem;
            std::memcpy(t->data.data() + static_cast<size_t>(to(k, ch, r, q)) * elem, c.data.data() + from, elem);
          }
    return t;
  }

  // Note [padded channels]: the channel count C' a conv reads its X and W padded to, where its
  // filter is a constant of one group with C not a multiple of the backend's; 0 otherwise.
  int64_t padded_channels(const Node& node) const {
    if (channel_multiple_ <= 1 || !node.has_input(1) || node.attr_int("group", 1) != 1) return 0;
    const ConstTensor* w = find_constant(graph_, node.inputs[1]);
    if (!w || w->info.shape.size() != 4) return 0;
    const int64_t c = w->info.shape[1], padded = (c + channel_multiple_ - 1) / channel_multiple_ * channel_multiple_;
    return c == padded ? 0 : padded;
  }

  // X (ONNX's layout, or channels-last already) as [N, H, W, C'] with zeros past C: one
  // "Transpose+Pad" from ONNX's layout where the backend runs it, else a Pad of the channels-last
  // value; one per value, shared by its readers.
  std::string padded_input(const std::string& name, int64_t padded) {
    auto memo = to_padded_.find(name);
    if (memo != to_padded_.end()) return memo->second;
    const int64_t channels = types_.at(name).shape[1];  // ONNX's [N, C, H, W]
    const std::vector<int64_t> pads = {0, 0, 0, 0, 0, 0, 0, padded - channels};  // begins, then ends
    const std::string out = fresh_(name + "/nhwc/c" + std::to_string(padded));
    Node fused = transpose(name, out, channels_last_perm());
    fused.name = fresh_(out + "/transpose_pad");
    fused.op_type = kTransposePadOp;
    fused.attrs["pads"] = pads;
    if (!last_.count(name) && !find_constant(graph_, name) && can_run_(fused)) {
      nodes_.push_back(std::move(fused));
    } else {
      Node n;
      n.name = fresh_(out + "/pad");
      n.op_type = "Pad";
      n.inputs = {channels_last(name)};
      n.outputs = {out};
      n.attrs["mode"] = std::string("constant");
      n.attrs["pads"] = pads;
      n.opset = 10;  // the attribute form (pads and value as inputs from 11), whatever the model's opset
      nodes_.push_back(std::move(n));
    }
    last_.insert(out);
    return to_padded_[name] = out;
  }

  // A [K, C, R, S] filter as [K, R, S, C'], zeros past C (C' = C: permuted only).
  static ConstTensorPtr padded_filter(const ConstTensor& c, int64_t padded) {
    const Shape& s = c.info.shape;
    const int64_t R = s[2], S = s[3];
    return rearranged_filter(c, {s[0], R, S, padded}, [=](int64_t k, int64_t ch, int64_t r, int64_t q) {
      return ((k * R + r) * S + q) * padded + ch;
    });
  }

  Graph& graph_;
  const std::function<bool(const Node&)>& can_run_;
  const std::map<std::string, TensorInfo>& types_;   // ONNX's shapes, symbolic dims as 1
  const std::map<std::string, TensorInfo>& types2_;  // the same with symbolic dims as 2
  FreshNames fresh_;
  int64_t channel_multiple_ = 1;  // Note [padded channels]; 1: none
  ChannelsLastForms forms_;       // Note [channels-last forms]
  std::set<std::string> last_;  // values stored channels-last (names unchanged)
  std::set<std::string> grouped_;  // 5-D values of a channel shuffle, stored [N, H, W, a, b] (Note [channel shuffle])
  std::map<std::string, std::string> to_last_, to_first_, to_padded_;
  std::map<std::string, std::string> to_blocks_;  // X and its pads -> its Transpose+SpaceToDepth
  std::vector<Node> nodes_;
  int converted_ = 0;
  // the dry run's regions: a union-find over node indices
  bool dry_ = false;
  size_t current_ = 0;
  std::vector<size_t> parent_;
  std::map<std::string, size_t> producer_;  // channels-last value -> the node that makes it
  std::vector<size_t> windows_;             // the window ops it would convert
  std::map<size_t, Shape> filters_;         // their filters' shapes ([] for a pool)
  std::set<size_t> depthwise_;              // the depthwise ones among them (group = K)
};

// The text plan() shows for a window op of a narrow region.
std::string narrow_reason(int64_t min_channels) {
  if (min_channels <= 1) {
    return "kept in ONNX's layout: its channels-last region has no conv, the work that pays for the layout "
           "conversions (Note [narrow regions])";
  }
  const std::string n = std::to_string(min_channels);
  return "kept in ONNX's layout: no conv of its channels-last region has " + n + " or more input channels and " + n +
         " or more filters, the work that pays for the layout conversions (Note [narrow regions])";
}

}  // namespace

int channels_last(Graph& graph, const std::function<bool(const Node&)>& can_run, int64_t min_channels,
                  int64_t channel_multiple, const ChannelsLastForms& forms) {
  // Nothing to do without a window op the backend runs channels-last (the forms alone gain nothing).
  bool any_window = false;
  for (const Node& node : graph.nodes) {
    if (!channels_last_inputs(node.op_type)) continue;
    Node renamed = node;
    renamed.op_type += kChannelsLastSuffix;
    if (can_run(renamed)) {
      any_window = true;
      break;
    }
  }
  if (!any_window) return 0;
  // Both runs read the types of the graph as it comes in, computed once.
  std::map<std::string, TensorInfo> types, types2;
  try {
    types = value_types(graph, 1), types2 = value_types(graph, 2);
  } catch (const std::exception&) {
    return 0;  // a graph whose shapes do not agree stays as it is: the planner names the node and why
  }
  std::set<size_t> narrow;
  if (min_channels > 0) {
    ChannelsLastRewrite dry(graph, can_run, types, types2, 1, true, forms);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      dry.at(i);
      if (!dry.add_window(graph.nodes[i]) && !dry.add_elementwise(graph.nodes[i])) dry.add_graph_op(graph.nodes[i]);
    }
    narrow = dry.narrow_windows(min_channels);
    for (size_t i : narrow) graph.nodes[i].layout_reason = narrow_reason(min_channels);
  }
  size_t index = 0;
  const std::function<bool(const Node&)> allowed = [&](const Node& node) {
    return !narrow.count(index) && can_run(node);
  };
  const std::function<bool(const Node&)>& gate = narrow.empty() ? can_run : allowed;
  ChannelsLastRewrite rewrite(graph, gate, types, types2, channel_multiple, false, forms);
  std::vector<Node> nodes = std::move(graph.nodes);
  graph.nodes.clear();
  for (Node& node : nodes) {
    if (!rewrite.add_window(node) && !rewrite.add_elementwise(node) && !rewrite.add_graph_op(node)) {
      rewrite.add_other(std::move(node));
    }
    ++index;
  }
  rewrite.finish();  // with nothing converted, the nodes as they were
  return rewrite.converted();
}

}  // namespace dnnx
