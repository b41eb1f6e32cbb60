// TfIdfVectorizer (opset 9): X int32/int64, [C] or [N, C] (a scalar counts as [1]) -> Y float32,
// [output_size] or [N, output_size], output_size = max(ngram_indexes) + 1. Finds, per row, the
// n-grams of the pool (pool_int64s; n-gram k is the k-th of the pool, k from 0) in X, with up to
// max_skip_count items skipped between an n-gram's items, and for each one found at column
// ngram_indexes[k] (as onnxruntime 1.32, whose weights go with the n-gram, not the column):
// TF adds 1, IDF sets weights[k] (or 1), TFIDF adds weights[k] (or 1). The n-gram trie and the counting loop
// (onnxruntime's, item for item) are in backends/cpu/text/tfidf_vectorizer_cpu.cc.
#include "ops/text/tfidf_vectorizer.h"

#include <algorithm>
#include <set>

namespace dnnx {

namespace {

constexpr int kTfIdfOpset = 9;

std::vector<TensorInfo> infer_tfidf(const Node& node, const std::vector<ValueInfo>& inputs) {
  const TensorInfo& x = require_input(node, inputs, 0, "X");
  if (!is_index(x.dtype)) {
    node_fail<UnsupportedModelError>(node, std::string("input X is ") + dtype_name(x.dtype) +
                                               ": dnnx runs TfIdfVectorizer on int32 or int64 (no strings yet)");
  }
  if (x.shape.size() > 2) {
    node_fail<InvalidModelError>(node, "input X must be [C] or [N, C], got " + shape_str(x.shape));
  }
  const TfIdfConfig c = tfidf_config(node);
  Shape out = x.shape.size() == 2 ? Shape{x.shape[0], c.output_size} : Shape{c.output_size};
  return {TensorInfo{out, DType::Float32}};
}

}  // namespace

TfIdfConfig tfidf_config(const Node& node) {
  TfIdfConfig c;
  auto fail = [&](const std::string& what) { node_fail<InvalidModelError>(node, what); };
  if (node.has_attr("pool_strings") && !node.attr_strings("pool_strings", {}).empty()) {
    node_fail<UnsupportedModelError>(node, "pool_strings is not supported: dnnx has no string tensors yet "
                                           "(pool_int64s with int32/int64 input only)");
  }
  const std::string mode = node.attr_string("mode", "");
  if (mode == "TF") c.mode = TfIdfMode::TF;
  else if (mode == "IDF") c.mode = TfIdfMode::IDF;
  else if (mode == "TFIDF") c.mode = TfIdfMode::TFIDF;
  else fail("mode must be TF, IDF or TFIDF, got '" + mode + "'");
  c.min_gram_length = node.attr_int("min_gram_length", 0);
  c.max_gram_length = node.attr_int("max_gram_length", 0);
  c.max_skip_count = node.attr_int("max_skip_count", 0);
  if (c.min_gram_length < 1) fail("min_gram_length must be positive, got " + std::to_string(c.min_gram_length));
  if (c.max_gram_length < c.min_gram_length) {
    fail("max_gram_length " + std::to_string(c.max_gram_length) + " must be >= min_gram_length " +
         std::to_string(c.min_gram_length));
  }
  if (c.max_skip_count < 0) fail("max_skip_count must not be negative, got " + std::to_string(c.max_skip_count));
  c.ngram_counts = node.attr_ints("ngram_counts", {});
  c.ngram_indexes = node.attr_ints("ngram_indexes", {});
  c.pool = node.attr_ints("pool_int64s", {});
  c.weights = node.attr_floats("weights", {});
  if (c.ngram_counts.empty()) fail("ngram_counts must not be empty");
  if (c.ngram_indexes.empty()) fail("ngram_indexes must not be empty");
  if (c.pool.empty()) fail("pool_int64s must not be empty");
  const int64_t groups = static_cast<int64_t>(c.ngram_counts.size());
  if (c.max_gram_length > groups) {
    fail("max_gram_length " + std::to_string(c.max_gram_length) + " exceeds the " + std::to_string(groups) +
         " n-gram lengths of ngram_counts");
  }
  const int64_t pool_size = static_cast<int64_t>(c.pool.size());
  int64_t ngrams = 0;              // the number of n-gram ids the pool defines
  std::set<std::vector<int64_t>> seen;  // the n-grams of lengths min..max_gram_length, which must differ
  for (int64_t i = 0; i < groups; ++i) {
    const int64_t n = i + 1;
    const int64_t begin = c.ngram_counts[i];
    const int64_t end = i + 1 < groups ? c.ngram_counts[i + 1] : pool_size;
    if (begin < 0 || begin > end || end > pool_size) {
      fail("ngram_counts must rise from 0 within the pool's " + std::to_string(pool_size) + " items, got " +
           shape_str(c.ngram_counts));
    }
    if ((end - begin) % n != 0) {
      fail("the pool's " + std::to_string(end - begin) + " items of " + std::to_string(n) + "-grams are not whole " +
           std::to_string(n) + "-grams");
    }
    ngrams += (end - begin) / n;
    if (n < c.min_gram_length || n > c.max_gram_length) continue;
    for (int64_t at = begin; at < end; at += n) {
      std::vector<int64_t> gram(c.pool.begin() + at, c.pool.begin() + at + n);
      if (!seen.insert(gram).second) {
        fail("pool_int64s repeats the " + std::to_string(n) + "-gram " + shape_str(gram) + " (at item " +
             std::to_string(at) + ")");
      }
    }
  }
  if (ngrams > static_cast<int64_t>(c.ngram_indexes.size())) {
    fail("the pool holds " + std::to_string(ngrams) + " n-grams but ngram_indexes has only " +
         std::to_string(c.ngram_indexes.size()) + " entries");
  }
  for (int64_t v : c.ngram_indexes) {
    if (v < 0) fail("ngram_indexes must not be negative, got " + std::to_string(v));
  }
  c.output_size = *std::max_element(c.ngram_indexes.begin(), c.ngram_indexes.end()) + 1;
  if (!c.weights.empty() && c.weights.size() != c.ngram_indexes.size()) {
    fail("weights has " + std::to_string(c.weights.size()) + " entries, ngram_indexes " +
         std::to_string(c.ngram_indexes.size()) + ": one weight per n-gram");
  }
  return c;
}

void register_text_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kTfIdfOpset;
  def.validate = [](const Node& node) {
    node.expect_only_attrs({"mode", "min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts",
                            "ngram_indexes", "pool_int64s", "pool_strings", "weights"});
    tfidf_config(node);
  };
  def.infer = infer_tfidf;
  r.add("TfIdfVectorizer", std::move(def));
}

}  // namespace dnnx
