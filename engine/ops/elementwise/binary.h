// What the binary arithmetic ops mean beyond their inference, shared by the op file and every
// backend: Mod's sign rule (div_mod.h holds the integer Div and Mod themselves).
#pragma once
#include "ops/elementwise/div_mod.h"
#include "ops/op.h"

namespace dnnx {

// The node's `fmod` attribute (0 when absent) as a ModKind.
ModKind mod_kind(const Node& node);

}  // namespace dnnx
