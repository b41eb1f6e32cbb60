// C++ error classes -> Python exceptions. UnsupportedModelError and InvalidModelError derive
// from DnnxError and ValueError; InputError is a plain ValueError; DeviceError a DnnxError.
#include "bindings.h"

namespace dnnx {

void bind_errors(py::module_& m) {
  static py::handle base = PyErr_NewException("dnnx.DnnxError", PyExc_Exception, nullptr);
  m.attr("DnnxError") = base;
  auto make = [&](const char* name, PyObject* second_base) {
    py::tuple bases = second_base ? py::tuple(py::make_tuple(base, py::handle(second_base)))
                                  : py::tuple(py::make_tuple(base));
    PyObject* cls = PyErr_NewException((std::string("dnnx.") + name).c_str(), bases.ptr(), nullptr);
    m.attr(name) = py::handle(cls);
    return py::handle(cls);
  };
  static py::handle unsupported = make("UnsupportedModelError", PyExc_ValueError);
  static py::handle invalid = make("InvalidModelError", PyExc_ValueError);
  static py::handle device = make("DeviceError", nullptr);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UnsupportedModelError& e) {
      PyErr_SetString(unsupported.ptr(), e.what());
    } catch (const InvalidModelError& e) {
      PyErr_SetString(invalid.ptr(), e.what());
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const DeviceError& e) {
      PyErr_SetString(device.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(base.ptr(), e.what());
    }
  });
}

}  // namespace dnnx
