#include "ops/text/value_shaped_strings.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ops/indexing/evaluate.h"
#include "ops/text/case_change.h"

namespace dnnx {

namespace {

const StringPtr* elements(const ConstTensor& t) { return reinterpret_cast<const StringPtr*>(t.data.data()); }

// A string tensor of `shape` holding `values`, in a store of its own.
ConstTensorPtr string_tensor(const Shape& shape, const std::vector<std::string>& values) {
  auto t = std::make_shared<ConstTensor>();
  t->info = TensorInfo{shape, DType::String};
  t->strings = std::make_shared<StringStore>();
  std::vector<StringPtr> ptrs;
  ptrs.reserve(values.size());
  for (const std::string& v : values) ptrs.push_back(t->strings->add(v));
  t->data.resize(ptrs.size() * sizeof(StringPtr));
  if (!ptrs.empty()) std::memcpy(t->data.data(), ptrs.data(), t->data.size());
  return t;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python's str.split(None, maxsplit): runs of whitespace, none at the ends. maxsplit < 0: no limit.
std::vector<std::string> split_whitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0;
  while (true) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i == s.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {  // the rest, right spaces trimmed
      size_t end = s.size();
      while (end > i && is_space(s[end - 1])) --end;
      out.push_back(s.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !is_space(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Python's str.split(delimiter, maxsplit) for a non-empty delimiter.
std::vector<std::string> split_on(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t start = 0;
  while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
    const size_t at = s.find(delimiter, start);
    if (at == std::string::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

std::vector<ConstTensorPtr> evaluate_string_split(const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  const ConstTensor& x = *inputs.at(0);
  const std::string delimiter = node.attr_string("delimiter", "");
  const int64_t maxsplit = node.attr_int("maxsplit", -1);
  const int64_t n = numel(x.info.shape);
  std::vector<std::vector<std::string>> pieces(static_cast<size_t>(n));
  size_t most = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = string_of(elements(x)[i]);
    pieces[i] = delimiter.empty() ? split_whitespace(s, maxsplit) : split_on(s, delimiter, maxsplit);
    most = std::max(most, pieces[i].size());
  }
  std::vector<std::string> y(static_cast<size_t>(n) * most);
  auto z = std::make_shared<ConstTensor>();
  z->info = TensorInfo{x.info.shape, DType::Int64};
  z->data.resize(static_cast<size_t>(n) * sizeof(int64_t));
  auto* counts = z->as_mut<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    std::copy(pieces[i].begin(), pieces[i].end(), y.begin() + i * static_cast<int64_t>(most));
    counts[i] = static_cast<int64_t>(pieces[i].size());
  }
  Shape y_shape = x.info.shape;
  y_shape.push_back(static_cast<int64_t>(most));
  return {string_tensor(y_shape, y), z};
}

std::vector<ConstTensorPtr> evaluate_string_normalizer(const Node& node, const std::vector<ConstTensorPtr>& inputs) {
  const ConstTensor& x = *inputs.at(0);
  const std::string action = node.attr_string("case_change_action", "NONE");
  const CaseChange change = action == "LOWER" ? CaseChange::Lower : action == "UPPER" ? CaseChange::Upper : CaseChange::None;
  const bool case_sensitive = node.attr_int("is_case_sensitive", 0) != 0;
  std::set<std::string> stopwords;
  for (const std::string& w : node.attr_strings("stopwords", {})) {
    stopwords.insert(case_sensitive ? w : change_case(w, CaseChange::Lower));
  }
  std::vector<std::string> kept;
  const int64_t n = numel(x.info.shape);
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = string_of(elements(x)[i]);
    if (stopwords.count(case_sensitive ? s : change_case(s, CaseChange::Lower))) continue;
    kept.push_back(change_case(s, change));
  }
  if (kept.empty() && n > 0) kept.emplace_back();  // onnxruntime's: one empty string
  Shape shape = x.info.shape;
  shape.back() = static_cast<int64_t>(kept.size());
  return {string_tensor(shape, kept)};
}

namespace {

const TensorInfo& require_strings(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (x.dtype != DType::String) {
    node_fail<InvalidModelError>(node, std::string("input X must be string, got ") + dtype_name(x.dtype));
  }
  return x;
}

}  // namespace

void register_value_shaped_strings_ops(OpRegistry& r) {
  OpDef split;
  split.min_opset = 20;
  split.value_shaped = true;
  split.validate = [](const Node& node) {
    node.expect_only_attrs({"delimiter", "maxsplit"});
    if (node.has_attr("maxsplit") && node.attr_int("maxsplit", 0) < 1) {
      node_fail<InvalidModelError>(node, "maxsplit must be at least 1, got " + std::to_string(node.attr_int("maxsplit", 0)));
    }
  };
  split.evaluate = evaluate_string_split;
  split.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    require_strings(node, inputs);
    return infer_by_evaluating(node, inputs, evaluate_string_split);
  };
  r.add("StringSplit", std::move(split));

  OpDef normalizer;
  normalizer.min_opset = 10;
  normalizer.value_shaped = true;
  normalizer.validate = [](const Node& node) {
    node.expect_only_attrs({"case_change_action", "is_case_sensitive", "locale", "stopwords"});
    const std::string action = node.attr_string("case_change_action", "NONE");
    if (action != "NONE" && action != "LOWER" && action != "UPPER") {
      node_fail<InvalidModelError>(node, "case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
    }
  };
  normalizer.evaluate = evaluate_string_normalizer;
  normalizer.infer = [](const Node& node, const std::vector<ValueInfo>& inputs) {
    const TensorInfo& x = require_strings(node, inputs);
    if (!(x.shape.size() == 1 || (x.shape.size() == 2 && x.shape[0] == 1))) {
      node_fail<InvalidModelError>(node, "input X must be [C] or [1, C], got " + shape_str(x.shape));
    }
    return infer_by_evaluating(node, inputs, evaluate_string_normalizer);
  };
  r.add("StringNormalizer", std::move(normalizer));
}

}  // namespace dnnx
