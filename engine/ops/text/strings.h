// The string ops' shared meaning (strings.cc says each op's semantics).
#pragma once
#include "ops/op.h"
#include "ops/text/full_match.h"

namespace dnnx {

// RegexFullMatch's `pattern`, compiled for full matches (Note [full match]); refuses (naming the
// node) what dnnx does not read as RE2 does, and a pattern that does not compile.
FullMatchPattern compile_full_match_pattern(const Node& node);

}  // namespace dnnx
