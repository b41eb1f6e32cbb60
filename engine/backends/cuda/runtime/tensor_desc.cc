#include "backends/cuda/runtime/tensor_desc.h"

#include <climits>

namespace dnnx::cuda {

namespace {
constexpr size_t kMinDims = 4;
}  // namespace

std::vector<int> to_int(const Shape& dims) {
  std::vector<int> out;
  for (int64_t d : dims) out.push_back(static_cast<int>(d));
  return out;
}

bool fits_int(const Shape& dims) {
  for (int64_t d : dims) {
    if (d > INT_MAX) return false;
  }
  return numel(dims) <= INT_MAX;
}

cudnnDataType_t cudnn_type(DType dtype) {
  if (dtype == DType::Float32) return CUDNN_DATA_FLOAT;
  if (dtype == DType::Float16) return CUDNN_DATA_HALF;
  if (dtype == DType::BFloat16) return CUDNN_DATA_BFLOAT16;  // sm_80 and later (cuDNN 8.1+)
  throw DeviceError(std::string("no cuDNN tensor of ") + dtype_name(dtype));
}

void set_tensor(const TensorDescriptor& desc, const Shape& dims, DType dtype, bool channels_last) {
  std::vector<int> d = to_int(dims);
  while (d.size() < kMinDims) d.push_back(1);
  if (channels_last) {
    if (d.size() != kMinDims) throw DeviceError("a channels-last tensor must be 4-D, got " + shape_str(dims));
    check(cudnnSetTensorNdDescriptorEx(desc, CUDNN_TENSOR_NHWC, cudnn_type(dtype), static_cast<int>(d.size()), d.data()),
          "cudnnSetTensorNdDescriptorEx (NHWC)");
    return;
  }
  std::vector<int> strides(d.size(), 1);
  for (size_t i = d.size() - 1; i-- > 0;) strides[i] = strides[i + 1] * d[i + 1];
  check(cudnnSetTensorNdDescriptor(desc, cudnn_type(dtype), static_cast<int>(d.size()), d.data(),
                                   strides.data()),
        "cudnnSetTensorNdDescriptor");
}

void set_filter(const FilterDescriptor& desc, const Shape& dims, DType dtype, bool channels_last) {
  std::vector<int> d = to_int(dims);
  check(cudnnSetFilterNdDescriptor(desc, cudnn_type(dtype), channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                   static_cast<int>(d.size()),
                                   d.data()),
        "cudnnSetFilterNdDescriptor");
}

}  // namespace dnnx::cuda
