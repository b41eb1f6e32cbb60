// LabelEncoder (ai.onnx.ml 1, 2, 4), with onnxruntime's semantics: X [..] -> Y [..], each element
// looked up among the keys, the matching value out, else the default.
//   opset 1     classes_strings C: a string X maps C[i] -> i (int64), an int64 X maps i -> C[i]
//               (string); defaults default_int64 (-1) and default_string ("_Unused")
//   opset 2     keys_{strings,int64s,floats} -> values_{strings,int64s,floats}, one list each of
//               the same length, the keys' type X's; defaults default_string ("_Unused"),
//               default_int64 (-1), default_float (-0.0), the one of the values' type
//   opset 4     also keys_tensor, values_tensor (string, int64, float32 or float64; values also
//               int16, whose default is -1 or default_tensor's) and default_tensor (one element of
//               the values' type, before the typed defaults; a float64 value type has no typed
//               default: -0.0); a NaN key matches a NaN input
// A key listed twice maps to its first value (onnxruntime's map keeps the first insertion).
// The kernel is backends/cpu/ml/label_encoder_cpu.cc.
#include "ops/ml/label_encoder.h"

#include "ops/ml/ml_attrs.h"
#include "ops/op.h"

namespace dnnx {

namespace {

constexpr int kTensorFormsOpset = 4;

// One side (keys or values) of the table: which attribute gives it, its type, its length.
struct Side {
  DType type = DType::String;
  size_t size = 0;
};

Side read_side(const Node& node, const std::string& prefix, std::vector<std::string>& strings,
               std::vector<int64_t>& ints, std::vector<double>& numbers) {
  std::vector<std::string> present;
  for (const char* suffix : {"_strings", "_int64s", "_floats", "_tensor"}) {
    if (node.has_attr(prefix + suffix)) present.push_back(prefix + suffix);
  }
  if (present.size() != 1) {
    node_fail<InvalidModelError>(node, "needs exactly one of " + prefix + "_strings, " + prefix + "_int64s, " + prefix +
                                           "_floats" + (node.opset >= kTensorFormsOpset ? ", " + prefix + "_tensor" : "") +
                                           ", got " + std::to_string(present.size()));
  }
  const std::string& name = present[0];
  Side side;
  if (name == prefix + "_strings") {
    strings = node.attr_strings(name, {});
    side = {DType::String, strings.size()};
  } else if (name == prefix + "_int64s") {
    ints = node.attr_ints(name, {});
    side = {DType::Int64, ints.size()};
  } else if (name == prefix + "_floats") {
    const std::vector<float> f = node.attr_floats(name, {});
    numbers.assign(f.begin(), f.end());
    side = {DType::Float32, numbers.size()};
  } else {
    const ConstTensor& t = *attr_tensor(node, name);
    side.type = t.info.dtype;
    if (t.info.dtype == DType::String) strings = tensor_strings(node, t, name);
    else if (t.info.dtype == DType::Int64 || (t.info.dtype == DType::Int16 && prefix == "values")) ints = tensor_ints(node, t, name);
    else if (t.info.dtype == DType::Float32 || t.info.dtype == DType::Float64) numbers = tensor_doubles(node, t, name);
    else node_fail<UnsupportedModelError>(node, "attribute '" + name + "' is " + dtype_name(t.info.dtype) +
                                                    ", expected string, int64, float32 or float64" +
                                                    (prefix == "values" ? " (or int16)" : ""));
    side.size = static_cast<size_t>(numel(t.info.shape));
  }
  return side;
}

void read_defaults(const Node& node, LabelTable& t) {
  t.default_string = node.attr_string("default_string", "_Unused");
  t.default_int = t.value_type == DType::Int16 ? -1 : node.attr_int("default_int64", -1);
  t.default_number = t.value_type == DType::Float32 ? node.attr_float("default_float", -0.0f) : -0.0;
  const ConstTensor* d = node.opset >= kTensorFormsOpset ? attr_tensor(node, "default_tensor") : nullptr;
  if (!d) return;
  if (d->info.dtype != t.value_type || numel(d->info.shape) != 1) {
    node_fail<InvalidModelError>(node, std::string("attribute 'default_tensor' must be one ") + dtype_name(t.value_type) +
                                           " (the values' type), got " + dtype_name(d->info.dtype) + " " +
                                           shape_str(d->info.shape));
  }
  if (t.value_type == DType::String) t.default_string = tensor_strings(node, *d, "default_tensor")[0];
  else if (t.value_type == DType::Int64 || t.value_type == DType::Int16) t.default_int = tensor_ints(node, *d, "default_tensor")[0];
  else t.default_number = tensor_doubles(node, *d, "default_tensor")[0];
}

void validate_label_encoder(const Node& node) {
  if (node.opset < 2) {
    node.expect_only_attrs({"classes_strings", "default_int64", "default_string"});
    return;
  }
  std::vector<std::string> known = {"keys_strings",   "keys_int64s",   "keys_floats",   "values_strings",
                                    "values_int64s",  "values_floats", "default_string", "default_int64",
                                    "default_float"};
  if (node.opset >= kTensorFormsOpset) known.insert(known.end(), {"keys_tensor", "values_tensor", "default_tensor"});
  node.expect_only_attrs(known);
}

std::vector<TensorInfo> infer_label_encoder(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  const LabelTable table = label_table(node, x.dtype);
  return {TensorInfo{x.shape, table.value_type}};
}

}  // namespace

size_t LabelTable::size() const {
  return key_type == DType::String ? key_strings.size() : key_type == DType::Int64 ? key_ints.size() : key_numbers.size();
}

LabelTable label_table(const Node& node, DType x_type) {
  LabelTable t;
  if (node.opset < 2) {
    const std::vector<std::string> classes = node.attr_strings("classes_strings", {});
    std::vector<int64_t> indices(classes.size());
    for (size_t i = 0; i < classes.size(); ++i) indices[i] = static_cast<int64_t>(i);
    if (x_type == DType::String) {
      t.key_type = DType::String, t.value_type = DType::Int64;
      t.key_strings = classes, t.value_ints = indices;
    } else if (x_type == DType::Int64) {
      t.key_type = DType::Int64, t.value_type = DType::String;
      t.key_ints = indices, t.value_strings = classes;
    } else {
      node_fail<InvalidModelError>(node, std::string("X is ") + dtype_name(x_type) + ", expected string or int64 (opset 1)");
    }
    t.default_string = node.attr_string("default_string", "_Unused");
    t.default_int = node.attr_int("default_int64", -1);
    return t;
  }
  const Side keys = read_side(node, "keys", t.key_strings, t.key_ints, t.key_numbers);
  const Side values = read_side(node, "values", t.value_strings, t.value_ints, t.value_numbers);
  if (keys.size != values.size) {
    node_fail<InvalidModelError>(node, "has " + std::to_string(keys.size) + " keys but " + std::to_string(values.size) +
                                           " values: they must have the same length");
  }
  t.key_type = keys.type;
  t.value_type = values.type;
  if (x_type != t.key_type) {
    node_fail<InvalidModelError>(node, std::string("X is ") + dtype_name(x_type) + " but the keys are " +
                                           dtype_name(t.key_type) + ": they must have the same type");
  }
  read_defaults(node, t);
  t.nan_matches_nan = node.opset >= kTensorFormsOpset;
  return t;
}

void register_label_encoder_ops(OpRegistry& r) {
  OpDef def;
  def.validate = validate_label_encoder;
  def.infer = infer_label_encoder;
  def.min_opset = 1;
  r.add(op_key(kMlDomain, "LabelEncoder"), std::move(def));
}

}  // namespace dnnx
