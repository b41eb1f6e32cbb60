// Add, Sub, Mul, Div, Mod: elementwise float32, int32 or int64 (both inputs the same type) with
// numpy multidirectional broadcasting (opset 7+; Mod 10+). Bool has no arithmetic: refused.
// Opsets before 7 used unidirectional broadcasting controlled by `broadcast`/`axis`; those
// attributes are refused with a message that says so rather than silently reinterpreted.
#include "ops/elementwise/binary.h"

#include "ops/elementwise/elementwise.h"

namespace dnnx {

namespace {

void validate_binary(const Node& node) {
  for (const char* legacy : {"broadcast", "axis"}) {
    if (node.has_attr(legacy)) {
      node_fail<UnsupportedModelError>(
          node, std::string("attribute '") + legacy +
                    "' is legacy (opset < 7) broadcasting; only numpy broadcasting (opset >= 7) "
                    "is supported");
    }
  }
  node.expect_only_attrs({});
}

// A [..] op B [..] -> C [broadcast(A, B)]; both inputs of one type.
std::vector<TensorInfo> infer_binary(const Node& node, const std::vector<ValueInfo>& inputs) {
  return {infer_broadcast_pair(node, inputs, ElementTypes::Numbers)};
}

OpDef binary_op() {
  OpDef def;
  def.validate = validate_binary;
  def.infer = infer_binary;
  def.min_opset = 7;
  return def;
}

void validate_mod(const Node& node) {
  node.expect_only_attrs({"fmod"});
  const int64_t fmod = node.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1) node_fail<InvalidModelError>(node, "fmod must be 0 or 1, got " + std::to_string(fmod));
}

// As binary; on floats fmod=0 is numpy.mod (ops/elementwise/div_mod.h: the newest opsets define it).
std::vector<TensorInfo> infer_mod(const Node& node, const std::vector<ValueInfo>& inputs) {
  return {infer_broadcast_pair(node, inputs, ElementTypes::Numbers)};
}

}  // namespace

ModKind mod_kind(const Node& node) { return node.attr_int("fmod", 0) == 1 ? ModKind::Fmod : ModKind::Floor; }

void register_binary_ops(OpRegistry& r) {
  r.add("Add", binary_op());
  r.add("Sub", binary_op());
  r.add("Mul", binary_op());
  r.add("Div", binary_op());
  OpDef mod;
  mod.validate = validate_mod;
  mod.infer = infer_mod;
  mod.min_opset = 10;
  r.add("Mod", std::move(mod));
}

}  // namespace dnnx
