#include "core/backend.h"

namespace dnnx {

// A host backend has no device memory; the engine never calls these hooks for one.
void* Backend::allocate(size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

void Backend::release(void*) const noexcept {}

void Backend::copy_to_device(void*, const void*, size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

void Backend::copy_to_host(void*, const void*, size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

}  // namespace dnnx
