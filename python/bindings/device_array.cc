#include "device_array.h"

#include <algorithm>

#include "dlpack_exchange.h"

namespace dnnx {

DeviceArray::DeviceArray(std::shared_ptr<Engine> engine, TensorInfo info)
    : engine_(std::move(engine)), info_(std::move(info)), device_(engine_->backend().device_index()) {
  if (!engine_->device()) {
    throw InputError("device arrays need a model on a CUDA device; this one runs on " + engine_->backend().name());
  }
  data_ = engine_->device()->allocate_array(info_.bytes());
}

namespace {

bool python_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

}  // namespace

DeviceArray::~DeviceArray() {
  // Freeing waits for the device turn (a run of another thread); a Python thread lets the
  // others run meanwhile. A DLPack consumer may drop the last reference without the GIL.
  if (PyGILState_Check() && !python_finalizing()) {
    py::gil_scoped_release release;
    engine_->device()->release_array(data_, info_.bytes(), readers_);
  } else {
    engine_->device()->release_array(data_, info_.bytes(), readers_);
  }
}

void DeviceArray::add_reader(uintptr_t stream) {
  if (std::find(readers_.begin(), readers_.end(), stream) == readers_.end()) readers_.push_back(stream);
}

namespace {

// The array interface's typestr: numpy's, or 1 or 2 opaque bytes for the ml_dtypes types (which
// the interface has no code for).
std::string typestr(DType t) {
  if (t == DType::BFloat16 || is_storage_only(t)) return "<V" + std::to_string(dtype_size(t));
  return py::str(numpy_dtype(t).attr("str"));
}

py::tuple shape_tuple(const Shape& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = shape[i];
  return t;
}

py::array to_numpy(const DeviceArray& a) {
  py::array out(numpy_dtype(a.info().dtype), a.info().shape);
  if (a.info().bytes() != 0) {
    void* dst = out.mutable_data();
    py::gil_scoped_release release;
    a.engine()->device()->array_to_host(dst, a.data(), a.info().bytes(), a.readers());
  }
  return out;
}

// __cuda_array_interface__ v3. No "stream" key: the data is complete, no reader need wait.
py::dict cuda_array_interface(const DeviceArray& a) {
  py::dict d;
  d["shape"] = shape_tuple(a.info().shape);
  d["typestr"] = typestr(a.info().dtype);
  d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.data()), false);
  d["strides"] = py::none();
  d["version"] = 3;
  return d;
}

// __dlpack__ of the array API standard. A consumer stream other than -1 (no synchronization
// wanted) becomes a reader; copy=True hands out a fresh copy on the same device. The capsule
// is the unversioned one whatever max_version asks: a producer may answer with an older ABI.
py::capsule to_dlpack(const std::shared_ptr<DeviceArray>& self, const py::object& stream, const py::object& /*max_version*/,
                   const py::object& dl_device, const py::object& copy) {
  if (!dl_device.is_none()) {
    const auto wanted = dl_device.cast<std::pair<int, int>>();
    if (wanted.first != dlpack::kCUDA || wanted.second != self->device()) {
      throw py::buffer_error("dnnx.DeviceArray lives on cuda:" + std::to_string(self->device()) +
                             " and exports no copy to another device (use .numpy() for the host)");
    }
  }
  std::shared_ptr<DeviceArray> source = self;
  if (!copy.is_none() && copy.cast<bool>()) {
    source = std::make_shared<DeviceArray>(self->engine(), self->info());
    void* dst = source->data();
    py::gil_scoped_release release;
    self->engine()->device()->copy_array(dst, self->data(), self->info().bytes());
  }
  if (!stream.is_none()) {
    const auto handle = stream.cast<int64_t>();
    if (handle == 0) throw py::value_error("__dlpack__: stream 0 is ambiguous for CUDA (use 1 or 2)");
    if (handle != -1) source->add_reader(static_cast<uintptr_t>(handle));
  }
  return export_dlpack(source);
}

}  // namespace

void bind_device_array(py::module_& m) {
  py::class_<DeviceArray, std::shared_ptr<DeviceArray>>(m, "DeviceArray", R"doc(
An array in a model's GPU memory: what ``Model.run(..., output="device")`` and
``Model.to_device(x)`` return. CuPy and PyTorch read it in place, through
``__cuda_array_interface__`` (``cupy.asarray``, ``torch.as_tensor``) or DLPack
(``torch.from_dlpack``, ``cupy.from_dlpack``); ``numpy()`` copies it to the host.

The data is complete when the array is handed out. It is freed when the last reference goes
(the array, or a tensor made from it with DLPack); each keeps its model alive. A DLPack consumer
that names its stream is waited for before the memory is reused; a reader through
``__cuda_array_interface__`` must keep a reference until its own work has finished.)doc")
      .def_property_readonly("shape", [](const DeviceArray& a) { return shape_tuple(a.info().shape); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return numpy_dtype(a.info().dtype); })
      .def_property_readonly("ndim", [](const DeviceArray& a) { return a.info().shape.size(); })
      .def_property_readonly("size", [](const DeviceArray& a) { return numel(a.info().shape); })
      .def_property_readonly("nbytes", [](const DeviceArray& a) { return a.info().bytes(); })
      .def_property_readonly("device", [](const DeviceArray& a) { return "cuda:" + std::to_string(a.device()); })
      .def_property_readonly("data_ptr", [](const DeviceArray& a) { return reinterpret_cast<uintptr_t>(a.data()); })
      .def("__len__", [](const DeviceArray& a) {
        if (a.info().shape.empty()) throw py::type_error("len() of a 0-d DeviceArray");
        return a.info().shape[0];
      })
      .def("__repr__", [](const DeviceArray& a) {
        return "<dnnx.DeviceArray " + shape_str(a.info().shape) + " " + dtype_name(a.info().dtype) + " on cuda:" +
               std::to_string(a.device()) + ">";
      })
      .def("numpy", &to_numpy, "A host copy (waits for the copy).")
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def("__dlpack__", &to_dlpack, py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
           py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
           "A DLPack capsule (unversioned 'dltensor') over the array's memory.")
      .def("__dlpack_device__", [](const DeviceArray& a) { return py::make_tuple(int(dlpack::kCUDA), a.device()); });
}

}  // namespace dnnx
