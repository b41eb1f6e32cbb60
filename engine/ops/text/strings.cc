// The string ops (Note [string tensors] in ir/tensor.h), with onnxruntime's semantics:
//   StringConcat (opset 20)     X, Y string, broadcast numpy-style -> string: X + Y, byte for byte
//   RegexFullMatch (opset 20)   X string [..] -> bool [..]: whether `pattern` matches all of X.
//                               onnxruntime's patterns are RE2's; dnnx matches them itself (Note
//                               [full match], full_match.h: RE2's common syntax); RE2's flags
//                               ((?i)), \p{..} classes and \Q..\E are refused at load, and so are
//                               backreferences, which RE2 has none of
// StringSplit and StringNormalizer, whose output shapes depend on the strings, are in
// value_shaped_strings.{h,cc}.
#include "ops/text/strings.h"

#include <stdexcept>

#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

constexpr int kStringOpsOpset = 20;

const TensorInfo& require_string(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const char* name) {
  const TensorInfo& t = require_input(node, inputs, i, name);
  if (t.dtype != DType::String) {
    node_fail<InvalidModelError>(node, std::string("input ") + name + " must be string, got " + dtype_name(t.dtype));
  }
  return t;
}

std::vector<TensorInfo> infer_string_concat(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_string(node, inputs, 0, "X");
  const TensorInfo& y = require_string(node, inputs, 1, "Y");
  return {TensorInfo{broadcast_shapes(node, x.shape, y.shape), DType::String}};
}

std::vector<TensorInfo> infer_regex_full_match(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_string(node, inputs, 0, "X");
  return {TensorInfo{x.shape, DType::Bool}};
}

void validate_regex_full_match(const Node& node) {
  node.expect_only_attrs({"pattern"});
  if (!node.has_attr("pattern")) node_fail<InvalidModelError>(node, "attribute 'pattern' is required");
  compile_full_match_pattern(node);
}

}  // namespace

FullMatchPattern compile_full_match_pattern(const Node& node) {
  const std::string pattern = node.attr_string("pattern", "");
  const auto refuse = [&](const std::string& why) {
    node_fail<UnsupportedModelError>(node, "pattern '" + pattern + "': " + why);
  };
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '\\') continue;
    const char next = pattern[i + 1];
    if (next >= '1' && next <= '9') refuse("backreferences are not RE2 syntax");
    if (next == 'p' || next == 'P' || next == 'Q' || next == 'C') {
      refuse(std::string("\\") + next + " (an RE2 extension) is not supported");
    }
    ++i;  // an escaped character
  }
  try {
    return FullMatchPattern(pattern);
  } catch (const std::invalid_argument& e) {
    node_fail<InvalidModelError>(node, "pattern '" + pattern + "' does not compile: " + e.what());
  }
}

void register_string_ops(OpRegistry& r) {
  OpDef concat;
  concat.validate = [](const Node& node) { node.expect_only_attrs({}); };
  concat.infer = infer_string_concat;
  concat.min_opset = kStringOpsOpset;
  r.add("StringConcat", std::move(concat));

  OpDef regex;
  regex.validate = validate_regex_full_match;
  regex.infer = infer_regex_full_match;
  regex.min_opset = kStringOpsOpset;
  r.add("RegexFullMatch", std::move(regex));
}

}  // namespace dnnx
