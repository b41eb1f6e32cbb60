// Note [mutable constants] in mutable_constants.h.
#include "runtime/mutable_constants.h"

namespace dnnx {

namespace {
thread_local bool mutable_constants = false;
}  // namespace

bool planning_mutable_constants() { return mutable_constants; }

MutableConstantsScope::MutableConstantsScope() : before_(mutable_constants) { mutable_constants = true; }
MutableConstantsScope::~MutableConstantsScope() { mutable_constants = before_; }

}  // namespace dnnx
