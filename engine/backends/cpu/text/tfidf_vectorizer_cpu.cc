// TfIdfVectorizer on the CPU (meaning: ops/text/tfidf_vectorizer.cc). The plan builds the pool's
// n-gram trie once; the kernel walks each row as onnxruntime does (Note [tfidf counting]).
#include <algorithm>
#include <unordered_map>

#include "ops/text/tfidf_vectorizer.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// A trie over the pool's items: node 0 is the root; a node's id is its n-gram's id (1-based, the
// pool's order) or 0 where the path is only the prefix of longer n-grams.
struct NgramTrie {
  struct TrieNode {
    int64_t id = 0;
    std::unordered_map<int64_t, int64_t> children;  // item -> node
  };
  std::vector<TrieNode> nodes{TrieNode{}};

  int64_t child(int64_t node, int64_t item) const {
    const auto& c = nodes[node].children;
    auto it = c.find(item);
    return it == c.end() ? -1 : it->second;
  }
  int64_t emplace(int64_t node, int64_t item) {
    auto it = nodes[node].children.find(item);
    if (it != nodes[node].children.end()) return it->second;
    nodes.emplace_back();
    const int64_t created = static_cast<int64_t>(nodes.size()) - 1;
    nodes[node].children.emplace(item, created);
    return created;
  }
};

// The pool's n-grams of lengths min_gram_length..max_gram_length; ids still count the others
// (onnxruntime's PopulateGrams). tfidf_config refused repeated n-grams.
NgramTrie build_trie(const TfIdfConfig& c) {
  NgramTrie trie;
  const size_t pool_size = c.pool.size();
  int64_t ngram_id = 1;
  for (size_t i = 0; i < c.ngram_counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const size_t begin = static_cast<size_t>(c.ngram_counts[i]);
    const size_t end = i + 1 < c.ngram_counts.size() ? static_cast<size_t>(c.ngram_counts[i + 1]) : pool_size;
    const int64_t count = static_cast<int64_t>(end - begin) / n;
    if (n < c.min_gram_length || n > c.max_gram_length) {
      ngram_id += count;
      continue;
    }
    size_t item = begin;
    for (int64_t g = 0; g < count; ++g) {
      int64_t node = 0;
      for (int64_t k = 0; k < n; ++k) node = trie.emplace(node, c.pool[item++]);
      trie.nodes[node].id = ngram_id++;
    }
  }
  return trie;
}

// Note [tfidf counting]: for each skip distance d = 1..max_skip_count+1 and each start item, walk
// the trie along items start, start+d, start+2d, ..., counting every n-gram of length >=
// min_gram_length met on the way. Unigrams do not depend on d, so after d = 1 the walk counts
// only n >= 2 (onnxruntime's start_ngram_size), and stops there when max_gram_length is 1. A
// start is skipped when the shortest n-gram counted would run past the row.
template <class T>
class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(TfIdfConfig c, int64_t rows, int64_t cols)
      : c_(std::move(c)), trie_(build_trie(c_)), rows_(rows), cols_(cols) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    float* y = args.out<float>(0);
    const int64_t width = c_.output_size;
    std::fill(y, y + rows_ * width, 0.0f);
    for (int64_t r = 0; r < rows_; ++r) walk_row(x + r * cols_, y + r * width);
  }

 private:
  void walk_row(const T* row, float* y) const {
    int64_t start_size = c_.min_gram_length;
    // A distance of cols_ or more fits no n-gram of 2 or more items: stopping there changes
    // nothing and bounds the loop whatever max_skip_count says.
    const int64_t max_distance = std::min(c_.max_skip_count, cols_) + 1;
    for (int64_t d = 1; d <= max_distance; ++d) {
      for (int64_t start = 0; start < cols_; ++start) {
        if (start + d * (start_size - 1) >= cols_) break;
        int64_t node = 0;
        int64_t item = start;
        for (int64_t n = 1; !trie_.nodes[node].children.empty() && n <= c_.max_gram_length && item < cols_;
             ++n, item += d) {
          node = trie_.child(node, static_cast<int64_t>(row[item]));
          if (node < 0) break;
          const int64_t id = trie_.nodes[node].id;
          if (n >= start_size && id != 0) found(id - 1, y);
        }
      }
      if (start_size == 1) {
        start_size = 2;
        if (start_size > c_.max_gram_length) break;
      }
    }
  }

  // N-gram k found: onnxruntime's per-hit update of its column (in float, in the walk's order).
  void found(int64_t k, float* y) const {
    float& out = y[c_.ngram_indexes[static_cast<size_t>(k)]];
    const float w = c_.weights.empty() ? 1.0f : c_.weights[static_cast<size_t>(k)];
    switch (c_.mode) {
      case TfIdfMode::TF: out += 1.0f; break;
      case TfIdfMode::IDF: out = w; break;
      case TfIdfMode::TFIDF: out += w; break;
    }
  }

  TfIdfConfig c_;
  NgramTrie trie_;
  int64_t rows_, cols_;
};

KernelChoice plan_tfidf(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const TensorInfo& x = inputs[0].info;
  const int64_t rows = x.shape.size() == 2 ? x.shape[0] : 1;
  const int64_t cols = x.shape.empty() ? 1 : x.shape.back();
  TfIdfConfig c = tfidf_config(node);
  KernelChoice choice;
  choice.algorithm = "n-gram trie";
  if (x.dtype == DType::Int32) choice.kernel = std::make_unique<TfIdfKernel<int32_t>>(std::move(c), rows, cols);
  else choice.kernel = std::make_unique<TfIdfKernel<int64_t>>(std::move(c), rows, cols);
  return choice;
}

}  // namespace

void register_cpu_text_kernels(KernelRegistry& r) { r.add("TfIdfVectorizer", plan_tfidf); }

}  // namespace dnnx
