// Cast to and from string on the CPU (Note [string tensors] in ir/tensor.h), as onnxruntime does:
//   number -> string   floats (float16, bfloat16, float8 through float32) as printf's "%.8g",
//                      NaN as "NaN", infinities as "INF" / "-INF"; integers in decimal; bool as
//                      "1" / "0"
//   string -> number   the leading number of the string, as C's strtod (floats: decimal,
//                      hexadecimal, "inf", "nan", any case) or strtoll / strtoull (integers,
//                      base 10; "1.5" reads 1); a string with no number is an InputError naming
//                      the node and the string
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/backend.h"

namespace dnnx {

// The kernel casting `n` elements of `from` to `to`, one of them DType::String.
std::unique_ptr<Kernel> make_string_cast(const std::string& where, DType from, DType to, int64_t n);

}  // namespace dnnx
