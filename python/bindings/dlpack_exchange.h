// DLPack in both directions: capsules over dnnx.DeviceArray memory for consumers (torch,
// CuPy), and reading the capsule a producer hands to Model.run.
#pragma once
#include <memory>
#include <string>

#include "bindings.h"
#include "dlpack.h"

namespace dnnx {

class DeviceArray;

// A capsule "dltensor" over `array`'s memory; until the consumer's deleter runs (or the capsule
// dies unconsumed) it keeps the array, and so its memory, alive.
py::capsule export_dlpack(const std::shared_ptr<DeviceArray>& array);

// The tensor in a producer's capsule "dltensor", which keeps owning it; InputError naming
// `what` when the object is no such capsule.
const dlpack::Tensor& capsule_tensor(const py::object& capsule, const std::string& what);

// The engine's dtype for a DLPack dtype; false when there is none. dlpack_dtype_name names any.
bool dtype_from_dlpack(dlpack::DataType type, DType& out);
std::string dlpack_dtype_name(dlpack::DataType type);

}  // namespace dnnx
