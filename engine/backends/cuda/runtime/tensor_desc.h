// cuDNN tensor and filter descriptors from the engine's shapes: fully packed NCHW (NCDHW) or NHWC,
// float32, or a half type (Note [half storage]: float16 with precision="fp16", bfloat16 with
// "bf16"). cuDNN wants at least 4 dims, so
// shorter shapes get unit dims appended.
#pragma once
#include <vector>

#include "backends/cuda/runtime/cuda_handles.h"
#include "ir/tensor.h"

namespace dnnx::cuda {

// CUDNN_DATA_FLOAT, CUDNN_DATA_HALF or CUDNN_DATA_BFLOAT16 (DeviceError for an integer type).
cudnnDataType_t cudnn_type(DType dtype);

// A packed tensor of `dims` (at least 4 after padding with trailing 1s). With `channels_last`
// (4-D only, Note [channels last]) `dims` are still [N, C, H, W], stored as [N, H, W, C].
void set_tensor(const TensorDescriptor& desc, const Shape& dims, DType dtype = DType::Float32,
                bool channels_last = false);
// A packed KCRS (KCTRS) filter of `dims`; with `channels_last` stored as KRSC.
void set_filter(const FilterDescriptor& desc, const Shape& dims, DType dtype = DType::Float32,
                bool channels_last = false);

// The dims as the ints cuDNN takes (check fits_int first).
std::vector<int> to_int(const Shape& dims);
// Whether every dim (and the element count) fits the int cuDNN and cuBLAS take.
bool fits_int(const Shape& dims);

}  // namespace dnnx::cuda
