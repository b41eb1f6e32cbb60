// TfIdfVectorizer's attributes, read and checked once (ops/text/tfidf_vectorizer.cc) and shared
// by its shape inference and its kernels.
#pragma once
#include "ops/op.h"

namespace dnnx {

enum class TfIdfMode { TF, IDF, TFIDF };

struct TfIdfConfig {
  TfIdfMode mode = TfIdfMode::TF;
  int64_t min_gram_length = 0, max_gram_length = 0, max_skip_count = 0;
  std::vector<int64_t> ngram_counts;   // where each n-gram length's run starts in the pool (n = 1, 2, ...)
  std::vector<int64_t> ngram_indexes;  // n-gram id - 1 -> output column
  std::vector<int64_t> pool;           // pool_int64s
  std::vector<float> weights;          // per n-gram (as ngram_indexes); empty: all 1
  int64_t output_size = 0;             // max(ngram_indexes) + 1
};

// The node's attributes, checked as onnxruntime checks them (InvalidModelError or
// UnsupportedModelError naming the node otherwise: pool_strings is refused, dnnx has no strings).
TfIdfConfig tfidf_config(const Node& node);

}  // namespace dnnx
