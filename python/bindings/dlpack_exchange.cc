#include "dlpack_exchange.h"

#include <vector>

#include "device_array.h"

namespace dnnx {

namespace {

// What a capsule of ours carries: the DLPack struct and the memory it describes.
struct Exported {
  dlpack::ManagedTensor managed{};
  std::vector<int64_t> shape;
  std::shared_ptr<DeviceArray> owner;
};

void delete_exported(dlpack::ManagedTensor* self) {
  delete static_cast<Exported*>(self->manager_ctx);  // may free the memory: no GIL needed
}

// The capsule's own destructor: frees what no consumer took (a consumed capsule is renamed).
void destroy_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) return;
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsuleName));
  if (managed && managed->deleter) managed->deleter(managed);
}

dlpack::DataType dlpack_dtype(DType t) {
  const uint8_t bits = static_cast<uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::Float32:
    case DType::Float64:
    case DType::Float16: return {dlpack::kFloat, bits, 1};
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64: return {dlpack::kInt, bits, 1};
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return {dlpack::kUInt, bits, 1};
    case DType::Bool: return {dlpack::kBool, 8, 1};
    case DType::BFloat16: return {dlpack::kBfloat, 16, 1};
    default: return {dlpack::kUInt, bits, 1};  // the float8 and 4-bit types: their bytes
  }
}

}  // namespace

py::capsule export_dlpack(const std::shared_ptr<DeviceArray>& array) {
  auto exported = std::make_unique<Exported>();
  exported->shape = array->info().shape;
  exported->owner = array;
  dlpack::Tensor& t = exported->managed.dl_tensor;
  t.data = array->data();
  t.device = {dlpack::kCUDA, array->device()};
  t.ndim = static_cast<int32_t>(exported->shape.size());
  t.dtype = dlpack_dtype(array->info().dtype);
  t.shape = exported->shape.data();
  t.strides = nullptr;  // C order
  t.byte_offset = 0;
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = delete_exported;
  PyObject* capsule = PyCapsule_New(&exported->managed, dlpack::kCapsuleName, destroy_capsule);
  if (!capsule) throw py::error_already_set();
  exported.release();  // the capsule's destructor or the consumer's deleter frees it now
  return py::reinterpret_steal<py::capsule>(capsule);
}

const dlpack::Tensor& capsule_tensor(const py::object& capsule, const std::string& what) {
  if (!PyCapsule_IsValid(capsule.ptr(), dlpack::kCapsuleName)) {
    throw InputError(what + ": __dlpack__() did not return a DLPack capsule named 'dltensor'");
  }
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), dlpack::kCapsuleName));
  return managed->dl_tensor;
}

bool dtype_from_dlpack(dlpack::DataType type, DType& out) {
  if (type.lanes != 1) return false;
  if (type.code == dlpack::kFloat && type.bits == 32) out = DType::Float32;
  else if (type.code == dlpack::kFloat && type.bits == 64) out = DType::Float64;
  else if (type.code == dlpack::kInt && type.bits == 8) out = DType::Int8;
  else if (type.code == dlpack::kInt && type.bits == 16) out = DType::Int16;
  else if (type.code == dlpack::kInt && type.bits == 32) out = DType::Int32;
  else if (type.code == dlpack::kInt && type.bits == 64) out = DType::Int64;
  else if (type.code == dlpack::kUInt && type.bits == 8) out = DType::UInt8;
  else if (type.code == dlpack::kUInt && type.bits == 16) out = DType::UInt16;
  else if (type.code == dlpack::kUInt && type.bits == 32) out = DType::UInt32;
  else if (type.code == dlpack::kUInt && type.bits == 64) out = DType::UInt64;
  else if (type.code == dlpack::kBool && type.bits == 8) out = DType::Bool;
  else return false;
  return true;
}

std::string dlpack_dtype_name(dlpack::DataType type) {
  const char* kind = "type";
  switch (type.code) {
    case dlpack::kInt: kind = "int"; break;
    case dlpack::kUInt: kind = "uint"; break;
    case dlpack::kFloat: kind = "float"; break;
    case dlpack::kBfloat: kind = "bfloat"; break;
    case dlpack::kComplex: kind = "complex"; break;
    case dlpack::kBool: return "bool";
  }
  std::string name = kind + std::to_string(type.bits);
  return type.lanes == 1 ? name : name + "x" + std::to_string(type.lanes);
}

}  // namespace dnnx
