// The DLPack exchange structs (the unversioned ABI, DLPack 0.8, which every consumer accepts as
// the capsule "dltensor"): https://dmlc.github.io/dlpack/latest/c_api.html. Declared here
// because no dlpack.h ships with the build's dependencies; the layout is fixed by that ABI.
#pragma once
#include <cstdint>

namespace dnnx::dlpack {

enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13 };
enum TypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kComplex = 5, kBool = 6 };

struct Device {
  DeviceType device_type;
  int32_t device_id;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null for a compact C-order tensor
  uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

}  // namespace dnnx::dlpack
