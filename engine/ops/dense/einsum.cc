// Einsum (opset 12): inputs (one or more, float32, int32 or int64, one dtype) and `equation` ->
// the sum over the labels that the output does not keep of the products of the inputs' elements
// (ops/dense/einsum.h parses it). Repeated labels in one operand take its diagonal; an ellipsis
// stands for broadcast batch dims.
#include "ops/dense/einsum.h"

#include <algorithm>
#include <cctype>

namespace dnnx {

namespace {

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

// "ab...c" -> letters and where the ellipsis sits (-1: none).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;  // index into letters where the ellipsis block goes
};

Term parse_term(const Node& node, const std::string& term) {
  Term t;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0 || t.ellipsis_at >= 0) {
        node_fail<InvalidModelError>(node, "equation term '" + term + "' has a stray '.' or two ellipses");
      }
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      t.letters.push_back(c);
    } else {
      node_fail<InvalidModelError>(node, std::string("equation term '") + term + "' has '" + c +
                                             "': labels are letters (and '...')");
    }
  }
  return t;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char c : s) {
    if (c == sep) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

void set_size(const Node& node, EinsumEquation& eq, int label, int64_t size, bool broadcasts) {
  auto it = eq.sizes.find(label);
  if (it == eq.sizes.end() || (broadcasts && it->second == 1)) {
    eq.sizes[label] = size;
    return;
  }
  if (it->second == size || (broadcasts && size == 1)) return;
  const std::string name = label >= kEllipsisLabel ? "an ellipsis dim" : std::string("label '") + char(label) + "'";
  node_fail<InvalidModelError>(node, name + " has sizes " + std::to_string(it->second) + " and " +
                                         std::to_string(size) + " in equation '" + node.attr_string("equation", "") + "'");
}

}  // namespace

EinsumEquation parse_einsum(const Node& node, const std::vector<Shape>& shapes) {
  const std::string equation = without_spaces(node.attr_string("equation", ""));
  const size_t arrow = equation.find("->");
  const std::vector<std::string> lhs = split(equation.substr(0, arrow), ',');
  if (lhs.size() != shapes.size()) {
    node_fail<InvalidModelError>(node, "equation '" + equation + "' names " + std::to_string(lhs.size()) +
                                           " operands for " + std::to_string(shapes.size()) + " inputs");
  }
  EinsumEquation eq;
  std::vector<Term> terms;
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    terms.push_back(parse_term(node, lhs[i]));
    const int64_t rank = static_cast<int64_t>(shapes[i].size());
    const int64_t letters = static_cast<int64_t>(terms[i].letters.size());
    if (rank < letters || (terms[i].ellipsis_at < 0 && rank != letters)) {
      node_fail<InvalidModelError>(node, "operand " + std::to_string(i) + " '" + lhs[i] + "' does not fit input " +
                                             std::to_string(i) + "'s shape " + shape_str(shapes[i]));
    }
    ellipsis_rank = std::max(ellipsis_rank, rank - letters);
  }
  std::map<int, int> uses;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    const int64_t width = static_cast<int64_t>(shapes[i].size() - t.letters.size());
    std::vector<int>& labels = eq.inputs.emplace_back();
    for (size_t j = 0; j <= t.letters.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis_at) {
        for (int64_t e = 0; e < width; ++e) labels.push_back(kEllipsisLabel + static_cast<int>(ellipsis_rank - width + e));
      }
      if (j < t.letters.size()) labels.push_back(t.letters[j]);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      set_size(node, eq, labels[d], shapes[i][d], labels[d] >= kEllipsisLabel);
      if (labels[d] < kEllipsisLabel) ++uses[labels[d]];
    }
  }
  if (arrow == std::string::npos) {
    for (int64_t e = 0; e < ellipsis_rank; ++e) eq.output.push_back(kEllipsisLabel + static_cast<int>(e));
    for (const auto& kv : uses) {
      if (kv.second == 1) eq.output.push_back(kv.first);  // std::map: ASCII order
    }
    return eq;
  }
  const Term out = parse_term(node, equation.substr(arrow + 2));
  if (ellipsis_rank > 0 && out.ellipsis_at < 0) {  // onnxruntime refuses it too (numpy would sum them)
    node_fail<InvalidModelError>(node, "equation '" + equation + "' has ellipsis dims in its inputs and no "
                                       "ellipsis in its output");
  }
  for (size_t j = 0; j <= out.letters.size(); ++j) {
    if (static_cast<int>(j) == out.ellipsis_at) {
      for (int64_t e = 0; e < ellipsis_rank; ++e) eq.output.push_back(kEllipsisLabel + static_cast<int>(e));
    }
    if (j >= out.letters.size()) continue;
    const int label = out.letters[j];
    if (!uses.count(label)) {
      node_fail<InvalidModelError>(node, std::string("output label '") + char(label) + "' of equation '" + equation +
                                             "' is in no operand");
    }
    if (std::count(eq.output.begin(), eq.output.end(), label)) {
      node_fail<InvalidModelError>(node, std::string("output label '") + char(label) + "' repeats in '" + equation + "'");
    }
    eq.output.push_back(label);
  }
  return eq;
}

namespace {

std::vector<TensorInfo> infer_einsum(const Node& node, const std::vector<ValueInfo>& inputs) {
  if (inputs.empty()) node_fail<InvalidModelError>(node, "Einsum needs at least one input");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorInfo& t = require_input(node, inputs, i, "Inputs");
    if (!is_floating(t.dtype) && !is_integer(t.dtype)) {  // float64 and the halves: in float32 (Note [cpu dtypes])
      node_fail<UnsupportedModelError>(node, std::string("inputs must be a float or integer type, got ") +
                                                 dtype_name(t.dtype));
    }
    if (t.dtype != inputs[0].info.dtype) node_fail<InvalidModelError>(node, "inputs must share one dtype");
    shapes.push_back(t.shape);
  }
  const EinsumEquation eq = parse_einsum(node, shapes);
  Shape out;
  for (int label : eq.output) out.push_back(eq.sizes.at(label));
  return {TensorInfo{out, inputs[0].info.dtype}};
}

}  // namespace

void register_einsum_ops(OpRegistry& r) {
  OpDef def;
  def.validate = [](const Node& node) {
    node.expect_only_attrs({"equation"});
    if (!node.has_attr("equation")) node_fail<InvalidModelError>(node, "attribute 'equation' is required");
  };
  def.infer = infer_einsum;
  def.min_opset = 12;
  r.add("Einsum", std::move(def));
}

}  // namespace dnnx
