#include "bind_values.h"

#include <cstring>

namespace dnnx {

namespace {

ConstTensorPtr tensor_from_py(const py::handle& obj, DType elem, const std::string& what) {
  if (!py::isinstance<py::array>(obj)) {
    throw InputError(what + ": expected a numpy array of " + dtype_name(elem) + ", got " +
                     std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  py::array array = py::array::ensure(obj, py::array::c_style);
  auto t = std::make_shared<ConstTensor>();
  t->info.shape.assign(array.shape(), array.shape() + array.ndim());
  if (is_string_dtype(array.dtype())) {
    t->info.dtype = DType::String;
    t->strings = std::make_shared<StringStore>();
    const std::vector<StringPtr> elements = strings_from_array(array, *t->strings, what);
    t->data.resize(elements.size() * sizeof(StringPtr));
    if (!elements.empty()) std::memcpy(t->data.data(), elements.data(), t->data.size());
  } else {
    t->info.dtype = dtype_from_numpy(array.dtype(), what);
    t->data.resize(t->info.bytes());
    if (!t->data.empty()) std::memcpy(t->data.data(), array.data(), t->data.size());
  }
  if (t->info.dtype != elem) {
    throw InputError(what + ": expected " + dtype_name(elem) + ", got " + t->info.str());
  }
  return t;
}

}  // namespace

ValueKind value_kind_from_name(const std::string& name) {
  if (name == "tensor") return ValueKind::Tensor;
  if (name == "sequence") return ValueKind::Sequence;
  if (name == "optional") return ValueKind::Optional;
  throw InputError("value kind must be 'tensor', 'sequence' or 'optional', got '" + name + "'");
}

HostValue value_from_py(const py::handle& obj, ValueKind kind, DType elem, const std::string& name) {
  const std::string what = "input '" + name + "'";
  if (kind == ValueKind::Optional) {
    if (obj.is_none()) return HostValue::optional(elem, {});
    const bool list = py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj);
    return HostValue::optional(elem, {value_from_py(obj, list ? ValueKind::Sequence : ValueKind::Tensor, elem, name)});
  }
  if (kind == ValueKind::Sequence) {
    if (!py::isinstance<py::list>(obj) && !py::isinstance<py::tuple>(obj)) {
      throw InputError(what + " is a sequence: expected a list of numpy arrays of " + dtype_name(elem) + ", got " +
                       std::string(py::str(py::type::of(obj).attr("__name__"))));
    }
    std::vector<HostValue> items;
    size_t k = 0;
    for (const py::handle item : obj) {
      items.emplace_back(tensor_from_py(item, elem, what + " element " + std::to_string(k++)));
    }
    return HostValue::sequence(elem, std::move(items));
  }
  return HostValue(tensor_from_py(obj, elem, what));
}

py::object value_to_py(const HostValue& value) {
  if (value.kind == ValueKind::Optional) return value.items.empty() ? py::none() : value_to_py(value.items[0]);
  if (value.kind == ValueKind::Sequence) {
    py::list out;
    for (const HostValue& item : value.items) out.append(value_to_py(item));
    return std::move(out);
  }
  if (!value.tensor) return py::none();
  const ConstTensor& t = *value.tensor;
  if (t.info.dtype == DType::String) {  // Note [string tensors]: str objects, not the elements' bytes
    return strings_to_array(reinterpret_cast<const StringPtr*>(t.data.data()), t.info.shape);
  }
  py::array out(numpy_dtype(t.info.dtype), t.info.shape);
  if (!t.data.empty()) std::memcpy(out.mutable_data(), t.data.data(), t.data.size());
  return std::move(out);
}

}  // namespace dnnx
