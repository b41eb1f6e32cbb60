// One error hierarchy for the whole engine. The bindings map each class to a Python exception
// (see python/bindings/bind_errors.cc): every message names the node, tensor or argument.
#pragma once
#include <stdexcept>
#include <string>

namespace dnnx {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The model uses an op, attribute, dtype or opset dnnx does not support (raised at load).
struct UnsupportedModelError : Error {
  using Error::Error;
};
// The model is malformed: shapes that cannot agree, a missing tensor, a bad attribute value.
struct InvalidModelError : Error {
  using Error::Error;
};
// A caller passed the wrong number, shape or dtype of inputs (Python ValueError).
struct InputError : Error {
  using Error::Error;
};
// No device, out of memory, a backend library error.
struct DeviceError : Error {
  using Error::Error;
};
// A sticky device error (an illegal address, a kernel that faulted): the device context is lost
// for the rest of the process, so nothing may fall back or retry; the message says the process
// must restart (Note [run-time fallback] in runtime/run_fallback.h). Python sees a DeviceError.
struct DeviceLostError : DeviceError {
  using DeviceError::DeviceError;
};

}  // namespace dnnx

// The one check macro: throws ExcType(message) when cond is false.
#define DNNX_CHECK(cond, ExcType, message) \
  do {                                     \
    if (!(cond)) throw ExcType(message);   \
  } while (0)
