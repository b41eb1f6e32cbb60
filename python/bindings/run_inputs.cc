#include "run_inputs.h"

#include <algorithm>

#include "device_array.h"
#include "dlpack_exchange.h"
#include "runtime/size_check.h"

namespace dnnx {

RunIO RunInputs::io() const {
  RunIO io;
  for (const InputArg& a : args) {
    io.inputs.push_back(a.data);
    io.input_memory.push_back(a.memory);
  }
  io.input_streams = streams;
  io.strings = strings.get();
  return io;
}

StringStore& RunInputs::string_store() {
  if (!strings) strings = std::make_shared<StringStore>();
  return *strings;
}

std::vector<TensorInfo> RunInputs::infos() const {
  std::vector<TensorInfo> out;
  for (const InputArg& a : args) out.push_back(a.info);
  return out;
}

namespace {

// What one input is checked against: its name for messages and its declared dtype (none for an
// input beyond the graph's, which check_inputs refuses by count).
struct Expected {
  std::string what;                // "input 'x'"
  const GraphInput* declared = nullptr;
};

void check_dtype(const Expected& e, DType got, const std::string& got_name) {
  if (e.declared && got != e.declared->dtype) {
    throw InputError(e.what + ": expected dtype " + dtype_name(e.declared->dtype) + ", got " + got_name);
  }
}

// C order, where a stride along a dim of size 1 does not matter. Strides in elements.
bool c_contiguous(const Shape& shape, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

void check_device(const Expected& e, const Backend& backend, int device, const char* how) {
  const int mine = backend.device_index();
  if (mine < 0) {
    throw InputError(e.what + ": is CUDA device memory (" + how + "), but this model runs on " +
                     backend.name() + ": pass a host array, or load the model with device='cuda'");
  }
  if (device != mine) {
    throw InputError(e.what + ": is on " + (device < 0 ? std::string("no CUDA device") : "cuda:" + std::to_string(device)) +
                     " (" + how + "), but this model runs on " + backend.name());
  }
}

// A numpy array of str or bytes, for a string input: its elements as the engine's (Note [string
// tensors] in ir/tensor.h), the strings copied into the run's store.
InputArg string_input(const py::array& a, const Expected& e, RunInputs& out) {
  if (e.declared && e.declared->dtype != DType::String) {
    throw InputError(e.what + ": expected dtype " + dtype_name(e.declared->dtype) + ", got " +
                     std::string(py::str(a.dtype())));
  }
  InputArg arg;
  arg.info.dtype = DType::String;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) arg.info.shape.push_back(a.shape(d));
  out.string_elements.push_back(strings_from_array(a, out.string_store(), e.what));
  arg.data = out.string_elements.back().data();
  return arg;
}

InputArg host_input(const py::handle& obj, const Expected& e, RunInputs& out) {
  if (e.declared && e.declared->dtype == DType::String) {
    // str, bytes or object arrays (and lists of str) all hold strings
    const py::array a = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                                       : py::array(py::module_::import("numpy").attr("asarray")(obj, "object"));
    if (!is_string_dtype(a.dtype())) {
      throw InputError(e.what + ": expected dtype string (a numpy array of str, bytes or object), got " +
                       std::string(py::str(a.dtype())));
    }
    return string_input(a, e, out);
  }
  if (py::isinstance<py::array>(obj) && is_string_dtype(py::reinterpret_borrow<py::array>(obj).dtype())) {
    return string_input(py::reinterpret_borrow<py::array>(obj), e, out);
  }
  if (py::isinstance<py::array>(obj)) {
    // A strided array (a broadcast view of billions of rows costs no memory) is copied to C order
    // below: check that copy's size first (Note [absurd sizes] in runtime/size_check.h).
    const py::array view = py::reinterpret_borrow<py::array>(obj);
    if (!(view.flags() & py::array::c_style)) {
      const Shape shape(view.shape(), view.shape() + view.ndim());
      size_t bytes = 0;
      if (__builtin_mul_overflow(static_cast<size_t>(std::max<int64_t>(numel(shape), 0)),
                                 static_cast<size_t>(view.itemsize()), &bytes)) {
        bytes = SIZE_MAX;
      }
      try {
        check_fits(bytes, host_memory_bytes(), e.what, "a non-contiguous " + shape_str(shape) + " array, copied "
                   "to C order,", "the host");
      } catch (const TooLargeError& error) {
        throw InputError(error.what());
      }
    }
  }
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a) throw InputError(e.what + ": expected an array (numpy, or a CUDA array with DLPack)");
  // equal, not is: an unpickled array (multiprocessing, Ray's object store) carries an equal
  // dtype that is not numpy's cached instance.
  if (e.declared && !a.dtype().equal(numpy_dtype(e.declared->dtype))) {
    throw InputError(e.what + ": expected dtype " + dtype_name(e.declared->dtype) + ", got " +
                     std::string(py::str(a.dtype())));
  }
  InputArg arg;
  // The declared dtype where it was checked above: dtype_from_numpy reads the dtype's name and
  // byte order through Python attributes, a few us per input of a small model's run.
  arg.info.dtype = e.declared ? e.declared->dtype : dtype_from_numpy(a.dtype(), e.what);
  for (py::ssize_t d = 0; d < a.ndim(); ++d) arg.info.shape.push_back(a.shape(d));
  arg.data = a.data();
  arg.keep = a;
  return arg;
}

InputArg device_array_input(const py::handle& obj, const Expected& e, const Backend& backend) {
  const DeviceArray& d = obj.cast<const DeviceArray&>();
  check_device(e, backend, d.device(), "a dnnx.DeviceArray");
  check_dtype(e, d.info().dtype, dtype_name(d.info().dtype));
  InputArg arg;
  arg.info = d.info();
  arg.data = d.data();
  arg.memory = Memory::Device;
  arg.keep = py::reinterpret_borrow<py::object>(obj);
  return arg;
}

InputArg dlpack_input(const py::handle& obj, const Expected& e, const Backend& backend, RunInputs& out) {
  if (backend.device_index() < 0) check_device(e, backend, -1, "DLPack");
  const auto stream = static_cast<int64_t>(backend.device()->import_stream());  // a device backend: checked above
  py::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(py::arg("stream") = stream);
  } catch (py::error_already_set& error) {
    if (!error.matches(PyExc_TypeError)) throw;
    capsule = obj.attr("__dlpack__")();  // an older producer without the stream keyword
  }
  const dlpack::Tensor& t = capsule_tensor(capsule, e.what);
  check_device(e, backend, t.device.device_id, "DLPack");
  InputArg arg;
  if (!dtype_from_dlpack(t.dtype, arg.info.dtype)) {
    const std::string want = e.declared ? dtype_name(e.declared->dtype) : "float32, int32 or int64";
    throw InputError(e.what + ": expected dtype " + want + ", got " + dlpack_dtype_name(t.dtype));
  }
  check_dtype(e, arg.info.dtype, dlpack_dtype_name(t.dtype));
  arg.info.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides && !c_contiguous(arg.info.shape, std::vector<int64_t>(t.strides, t.strides + t.ndim))) {
    throw InputError(e.what + ": a strided (non C-contiguous) device tensor; pass a contiguous one "
                     "(torch: .contiguous(); CuPy: cupy.ascontiguousarray)");
  }
  arg.data = static_cast<const uint8_t*>(t.data) + t.byte_offset;
  arg.memory = Memory::Device;
  arg.keep = capsule;  // its destructor hands the tensor back to the producer after the run
  if (std::find(out.streams.begin(), out.streams.end(), static_cast<uintptr_t>(stream)) == out.streams.end()) {
    out.streams.push_back(static_cast<uintptr_t>(stream));
  }
  return arg;
}

InputArg cuda_array_interface_input(const py::handle& obj, const Expected& e, const Backend& backend,
                                    RunInputs& out) {
  const py::dict cai = obj.attr("__cuda_array_interface__");
  if (cai.contains("mask") && !cai["mask"].is_none()) {
    throw InputError(e.what + ": masked __cuda_array_interface__ arrays are not supported");
  }
  InputArg arg;
  const std::string typestr = cai["typestr"].cast<std::string>();
  const py::dtype dtype(typestr);
  if (!(dtype.equal(py::dtype::of<float>()) || dtype.equal(py::dtype::of<int32_t>()) ||
        dtype.equal(py::dtype::of<int64_t>()))) {
    const std::string want = e.declared ? dtype_name(e.declared->dtype) : "float32, int32 or int64";
    throw InputError(e.what + ": expected dtype " + want + ", got " + std::string(py::str(dtype)));
  }
  arg.info.dtype = dtype_from_numpy(dtype, e.what);
  check_dtype(e, arg.info.dtype, std::string(py::str(dtype)));
  for (const py::handle d : cai["shape"].cast<py::tuple>()) arg.info.shape.push_back(d.cast<int64_t>());
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    std::vector<int64_t> strides;
    for (const py::handle s : cai["strides"].cast<py::tuple>()) strides.push_back(s.cast<int64_t>() / dtype.itemsize());
    if (!c_contiguous(arg.info.shape, strides)) {
      throw InputError(e.what + ": a strided (non C-contiguous) device array; pass a contiguous one");
    }
  }
  arg.data = reinterpret_cast<const void*>(cai["data"].cast<py::tuple>()[0].cast<uintptr_t>());
  const DeviceServices* device = backend.device();
  if (numel(arg.info.shape) != 0) check_device(e, backend, device ? device->device_of(arg.data) : -1, "__cuda_array_interface__");
  else if (backend.device_index() < 0) check_device(e, backend, -1, "__cuda_array_interface__");
  arg.memory = Memory::Device;
  arg.keep = py::reinterpret_borrow<py::object>(obj);
  if (cai.contains("stream") && !cai["stream"].is_none()) out.streams.push_back(cai["stream"].cast<uintptr_t>());
  return arg;
}

// A DLPack producer whose memory is on a CUDA device (not the host: numpy and CPU tensors
// take the host path).
bool on_cuda_by_dlpack(const py::handle& obj) {
  if (!py::hasattr(obj, "__dlpack_device__")) return false;
  const auto device = obj.attr("__dlpack_device__")().cast<std::pair<int, int>>();
  return device.first == dlpack::kCUDA || device.first == dlpack::kCUDAManaged;
}

}  // namespace

RunInputs read_inputs(const py::list& objects, const Engine& engine) {
  return read_inputs(objects, engine.backend(), engine.graph().inputs);
}

RunInputs read_inputs(const py::list& objects, const Backend& backend, const std::vector<GraphInput>& declared) {
  RunInputs out;
  for (size_t i = 0; i < objects.size(); ++i) {
    Expected e;
    e.declared = i < declared.size() ? &declared[i] : nullptr;
    e.what = e.declared ? "input '" + declared[i].name + "'" : "input " + std::to_string(i);
    const py::handle obj = objects[i];
    if (py::isinstance<py::array>(obj)) {
      out.args.push_back(host_input(obj, e, out));
    } else if (py::isinstance<DeviceArray>(obj)) {
      out.args.push_back(device_array_input(obj, e, backend));
    } else if (on_cuda_by_dlpack(obj)) {
      out.args.push_back(dlpack_input(obj, e, backend, out));
    } else if (py::hasattr(obj, "__cuda_array_interface__")) {
      out.args.push_back(cuda_array_interface_input(obj, e, backend, out));
    } else {
      out.args.push_back(host_input(obj, e, out));
    }
  }
  return out;
}

}  // namespace dnnx
