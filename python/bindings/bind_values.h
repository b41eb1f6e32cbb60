// Python objects <-> the engine's host values (Note [sequences] in runtime/values/host_value.h):
// a numpy array is a tensor, a list (or tuple) of arrays a sequence, None an optional holding none.
#pragma once
#include <string>

#include "bindings.h"
#include "runtime/values/host_value.h"

namespace dnnx {

// `obj` as the value of graph input `name` declared `kind` with element type `elem`: an array for
// a tensor, a list of arrays for a sequence, None or either for an optional. An InputError names
// the input and what was expected.
HostValue value_from_py(const py::handle& obj, ValueKind kind, DType elem, const std::string& name);

// A tensor as a numpy array (str objects for strings), a sequence as a list, an optional as None
// or its value.
py::object value_to_py(const HostValue& value);

// "tensor", "sequence" or "optional" (python/dnnx/_importer.py's value kinds); InputError otherwise.
ValueKind value_kind_from_name(const std::string& name);

}  // namespace dnnx
