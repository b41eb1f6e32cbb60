// The string ops whose output shapes follow from their input's values (Note [staged plans] in
// runtime/stages.h): computed on the host from whole input tensors, as OpDef::evaluate.
//   StringSplit (opset 20)        X string [..] -> Y string [.., M], Z int64 [..]: each string
//                                 split as Python's str.split(delimiter, maxsplit) does (no or an
//                                 empty delimiter: runs of whitespace, leading and trailing ones
//                                 dropped; else every delimiter, empty pieces kept; at most
//                                 maxsplit splits), M the most pieces of any string, shorter rows
//                                 padded with "", Z each string's count
//   StringNormalizer (opset 10)   with stopwords: X [C] or [1, C] -> the strings that are not a
//                                 stopword (compared as they are, or lower-cased when
//                                 is_case_sensitive is 0), case-changed; none left gives one ""
#pragma once
#include <vector>

#include "ir/graph.h"

namespace dnnx {

std::vector<ConstTensorPtr> evaluate_string_split(const Node& node, const std::vector<ConstTensorPtr>& inputs);
std::vector<ConstTensorPtr> evaluate_string_normalizer(const Node& node, const std::vector<ConstTensorPtr>& inputs);

}  // namespace dnnx
