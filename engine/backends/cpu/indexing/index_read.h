// Reading an index tensor on the CPU as a kernel runs (the indexing ops take int32 or int64
// indices; a negative one counts from the end of its dim).
#pragma once
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace dnnx {

// Element i of an int32 or int64 index tensor.
inline int64_t read_index(const void* p, DType t, int64_t i) {
  return t == DType::Int32 ? static_cast<const int32_t*>(p)[i] : static_cast<const int64_t*>(p)[i];
}

// `raw` made non-negative for a dim of `size`; an InputError naming `where` when it is out of
// [-size, size).
inline int64_t checked_index(const std::string& where, int64_t raw, int64_t size) {
  const int64_t i = raw < 0 ? raw + size : raw;
  if (i < 0 || i >= size) {
    throw InputError(where + ": index " + std::to_string(raw) + " is out of range for a dim of size " +
                     std::to_string(size));
  }
  return i;
}

}  // namespace dnnx
