// The string ops' shared meaning (strings.cc says each op's semantics).
#pragma once
#include <regex>

#include "ops/op.h"

namespace dnnx {

// RegexFullMatch's `pattern`, compiled for full matches; refuses (naming the node) what is not
// RE2 syntax dnnx reads alike, and a pattern that does not compile.
std::regex compile_full_match_pattern(const Node& node);

}  // namespace dnnx
