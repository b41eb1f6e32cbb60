// Note [mutable constants] in mutable_constants.h.
#include "runtime/mutable_constants.h"

#include <algorithm>
#include <utility>

namespace dnnx {

namespace {
thread_local bool mutable_constants = false;
thread_local const std::vector<std::string>* changing_constants = nullptr;
}  // namespace

bool planning_mutable_constants() { return mutable_constants; }

bool constant_changes(const std::string& name) {
  return changing_constants && std::find(changing_constants->begin(), changing_constants->end(), name) !=
                                   changing_constants->end();
}

MutableConstantsScope::MutableConstantsScope(std::vector<std::string> changing)
    : changing_(std::move(changing)), before_(mutable_constants), changing_before_(changing_constants) {
  mutable_constants = true;
  changing_constants = &changing_;
}

MutableConstantsScope::~MutableConstantsScope() {
  mutable_constants = before_;
  changing_constants = changing_before_;
}

}  // namespace dnnx
