// Splits a graph at its first trainable node into a frozen head and a trainable tail.
// The head runs as a plain inference Engine (rewrite passes on, one liveness arena): it keeps
// nothing for backward. The tail starts at the first node that reads a trainable parameter and
// holds every later node; its graph inputs are the values it reads from the head or from the
// model's inputs (the boundary), and its one output is the model's first output (the loss's).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace dnnx {

struct GraphSplit {
  Graph head;  // no nodes when the first node is trainable
  Graph tail;
  // For each tail input: the model input it is (index), or -1 when the head computes it
  // (then head_output gives its position among head.outputs).
  std::vector<int> tail_from_model_input;
  std::vector<int> tail_from_head_output;
  // For each head input: the model input index it is.
  std::vector<int> head_from_model_input;
};

// InputError when the model's first output does not depend on any parameter in `params`.
// The tail's inputs get the model inputs' dims, or unknown dims (-1) for head values (their
// dtypes are filled in by the caller once the head is planned).
GraphSplit split_at_first_trainable(const Graph& graph, const std::set<std::string>& params);

}  // namespace dnnx
