// The importer's plain-value IR (a dict built by python/dnnx/_importer.py) -> the engine's Graph.
#include <cstring>
#include <map>

#include <pybind11/stl.h>

#include "bindings.h"

namespace dnnx {

// Note [dtypes] (ir/tensor.h): an engine dtype is the numpy dtype of its name, numpy's own or
// ml_dtypes' (bfloat16, the float8 types, int4, uint4, float4_e2m1fn: what onnx's numpy_helper
// gives), little-endian. Compared by name and byte order, so an unpickled array's dtype (equal to
// numpy's cached one, not the same object) is recognised too.
DType dtype_from_numpy(const py::dtype& dt, const std::string& what) {
  if (is_string_dtype(dt)) return DType::String;
  const std::string order = py::str(dt.attr("byteorder"));
  DType out = DType::Float32;
  if (order != ">" && dtype_from_name(py::str(dt.attr("name")), out) && static_cast<size_t>(dt.itemsize()) == dtype_size(out)) {
    return out;
  }
  throw InputError(what + ": dtype " + std::string(py::str(dt)) +
                   " is not supported (a numeric numpy dtype, bool, or an ml_dtypes one of ONNX's types expected)");
}

bool is_string_dtype(const py::dtype& dt) {
  const char kind = dt.kind();
  return kind == 'O' || kind == 'U' || kind == 'S';
}

std::vector<StringPtr> strings_from_array(const py::array& array, StringStore& store, const std::string& what) {
  // Flattened in C order through numpy itself (any strides, any of the three dtypes).
  const py::list items = array.attr("ravel")(py::str("C")).attr("tolist")();
  std::vector<StringPtr> out;
  out.reserve(items.size());
  for (const py::handle item : items) {
    if (py::isinstance<py::str>(item)) {
      out.push_back(store.add(item.cast<std::string>()));  // UTF-8
    } else if (py::isinstance<py::bytes>(item)) {
      out.push_back(store.add(std::string(py::reinterpret_borrow<py::bytes>(item))));
    } else {
      throw InputError(what + ": a string tensor holds str or bytes, got an element of type " +
                       std::string(py::str(py::type::of(item).attr("__name__"))));
    }
  }
  return out;
}

py::array strings_to_array(const StringPtr* elements, const Shape& shape) {
  py::array out(numpy_dtype(DType::String), shape);
  auto** objects = static_cast<PyObject**>(out.mutable_data());
  const int64_t n = numel(shape);
  for (int64_t i = 0; i < n; ++i) {
    const std::string& s = string_of(elements[i]);
    // As onnxruntime returns them: str, decoded as UTF-8 (an invalid byte becomes U+FFFD).
    PyObject* text = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace");
    if (!text) throw py::error_already_set();
    Py_XDECREF(objects[i]);
    objects[i] = text;
  }
  return out;
}

py::dtype numpy_dtype(DType t) {
  // Made once per type, and kept for the process (numpy's dtype objects live as long).
  static std::vector<py::dtype*> cache(kDTypeCount, nullptr);
  py::dtype*& slot = cache[static_cast<size_t>(t)];
  if (!slot) {
    const std::string name = t == DType::String ? "object" : dtype_name(t);
    py::object type = py::str(name);
    if (t == DType::BFloat16 || is_storage_only(t)) type = py::module_::import("ml_dtypes").attr(name.c_str());
    slot = new py::dtype(py::module_::import("numpy").attr("dtype")(type));
  }
  return *slot;
}

namespace {

// Note [string tensors] (ir/tensor.h): a numpy array of str or bytes (object, unicode or bytes
// dtype) -> a string constant, its strings (UTF-8) in its own store.
ConstTensorPtr string_tensor(const py::array& source, const std::string& what) {
  auto t = std::make_shared<ConstTensor>();
  t->info.dtype = DType::String;
  for (py::ssize_t d = 0; d < source.ndim(); ++d) t->info.shape.push_back(source.shape(d));
  t->strings = std::make_shared<StringStore>();
  const std::vector<StringPtr> elements = strings_from_array(source, *t->strings, what);
  t->data.resize(elements.size() * sizeof(StringPtr));
  if (!elements.empty()) std::memcpy(t->data.data(), elements.data(), t->data.size());
  return t;
}

DType graph_input_dtype(const std::string& name, const std::string& what) {
  DType out = DType::Float32;
  if (!dtype_from_name(name, out)) throw UnsupportedModelError(what + ": element type " + name + " is not supported");
  return out;
}

ConstTensorPtr tensor_from_array(const py::array& source, const std::string& what) {
  if (is_string_dtype(source.dtype())) return string_tensor(source, what);
  auto array = py::array::ensure(source, py::array::c_style);
  auto t = std::make_shared<ConstTensor>();
  t->info.dtype = dtype_from_numpy(array.dtype(), what);
  for (py::ssize_t d = 0; d < array.ndim(); ++d) t->info.shape.push_back(array.shape(d));
  // One pass over the bytes (resize then memcpy wrote them twice: ResNet-50's 102 MB of weights
  // took 84 ms here).
  const auto* bytes = static_cast<const uint8_t*>(array.data());
  t->data.assign(bytes, bytes + t->info.bytes());
  return t;
}

Attribute attribute_from_ir(const py::tuple& kind_value, const std::string& what) {
  const std::string kind = kind_value[0].cast<std::string>();
  const py::object value = kind_value[1];
  if (kind == "int") return value.cast<int64_t>();
  if (kind == "float") return value.cast<float>();
  if (kind == "string") return value.cast<std::string>();
  if (kind == "ints") return value.cast<std::vector<int64_t>>();
  if (kind == "floats") return value.cast<std::vector<float>>();
  if (kind == "strings") return value.cast<std::vector<std::string>>();
  if (kind == "tensor") return tensor_from_array(value.cast<py::array>(), what);
  // Note [subgraphs]: a body is a whole IR dict of its own, converted the same way (recursively).
  if (kind == "graph") return GraphPtr(std::make_shared<Graph>(graph_from_ir(value.cast<py::dict>())));
  throw UnsupportedModelError(what + ": attributes of kind " + kind + " are not supported");
}

}  // namespace

Graph graph_from_ir(const py::dict& ir) {
  Graph g;
  g.opset = ir["opset"].cast<int>();
  // Note [op domains] (ir/graph.h): {domain: version} of the model's opset_import, "" = ai.onnx.
  // Optional, as the domain of a node spec is: a hand-written IR of ai.onnx nodes may leave both out.
  if (ir.contains("opsets")) g.opsets = ir["opsets"].cast<std::map<std::string, int>>();
  g.opsets[""] = g.opset;
  for (auto item : ir["constants"].cast<py::dict>()) {
    const std::string name = item.first.cast<std::string>();
    g.constants[name] = tensor_from_array(item.second.cast<py::array>(), "initializer '" + name + "'");
  }
  const auto read_decl = [](const py::tuple& spec, const char* what) {
    GraphInput in;
    in.name = spec[0].cast<std::string>();
    for (auto dim : spec[1].cast<py::list>()) {
      if (py::isinstance<py::int_>(dim)) {
        in.dims.push_back(dim.cast<int64_t>());
        in.symbols.emplace_back();
      } else {
        in.dims.push_back(-1);
        in.symbols.push_back(py::str(dim).cast<std::string>());
      }
    }
    in.dtype = graph_input_dtype(spec[2].cast<std::string>(), what + ("'" + in.name + "'"));
    return in;
  };
  for (auto item : ir["inputs"].cast<py::list>()) g.inputs.push_back(read_decl(item.cast<py::tuple>(), "graph input "));
  if (ir.contains("output_types")) {  // a body's (Note [subgraphs])
    for (auto item : ir["output_types"].cast<py::list>()) g.output_decls.push_back(read_decl(item.cast<py::tuple>(), "graph output "));
  }
  for (auto item : ir["outputs"].cast<py::list>()) g.outputs.push_back(item.cast<std::string>());
  for (auto item : ir["nodes"].cast<py::list>()) {
    auto spec = item.cast<py::tuple>();
    Node node;
    node.op_type = spec[0].cast<std::string>();
    node.name = spec[1].cast<std::string>();
    node.inputs = spec[2].cast<std::vector<std::string>>();
    node.outputs = spec[3].cast<std::vector<std::string>>();
    if (spec.size() > 5) node.domain = spec[5].cast<std::string>();
    if (node.domain == "ai.onnx") node.domain.clear();
    auto version = g.opsets.find(node.domain);
    if (version == g.opsets.end()) {
      throw InvalidModelError(node.where() + ": its domain '" + node.domain + "' is not in the model's opset_import");
    }
    node.opset = version->second;
    for (auto attr : spec[4].cast<py::dict>()) {
      const std::string key = attr.first.cast<std::string>();
      node.attrs[key] = attribute_from_ir(attr.second.cast<py::tuple>(), node.where() + " attribute '" + key + "'");
    }
    g.nodes.push_back(std::move(node));
  }
  return g;
}

}  // namespace dnnx
