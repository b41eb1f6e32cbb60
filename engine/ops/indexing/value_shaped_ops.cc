// The value-shaped ops' host computes by op type (Note [value-shaped compute]).
#include "ops/indexing/value_shaped_ops.h"

namespace dnnx {

ValueShapedCompute find_value_shaped_compute(const std::string& op_type) {
  if (op_type == "NonMaxSuppression") return non_max_suppression;
  if (op_type == "Unique") return unique;
  return nullptr;
}

}  // namespace dnnx
