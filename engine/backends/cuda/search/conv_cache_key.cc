#include "backends/cuda/search/conv_cache_key.h"

#include "backends/cuda/search/search.h"

namespace dnnx::cuda {

namespace {

constexpr int kMaxDims = CUDNN_DIM_MAX;               // tensor and filter dims
constexpr int kMaxConvDims = CUDNN_DIM_MAX - 2;        // spatial dims: cuDNN refuses a longer request

std::string joined(const int* v, int n, const char* sep) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? sep : "") + std::to_string(v[i]);
  return out;
}

std::string dtype_text(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_FLOAT: return "float";
    case CUDNN_DATA_HALF: return "half";
    case CUDNN_DATA_BFLOAT16: return "bfloat16";
    case CUDNN_DATA_DOUBLE: return "double";
    default: return "dtype" + std::to_string(static_cast<int>(t));
  }
}

std::string math_text(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA";
    default: return std::to_string(static_cast<int>(m));
  }
}

// "float 64x1x28x28/784x784x28x1": type, dims and strides (the layout).
std::string tensor_text(const TensorDescriptor& desc) {
  cudnnDataType_t type{};
  int n = 0, dims[kMaxDims] = {}, strides[kMaxDims] = {};
  check(cudnnGetTensorNdDescriptor(desc, kMaxDims, &type, &n, dims, strides), "cudnnGetTensorNdDescriptor");
  return dtype_text(type) + " " + joined(dims, n, "x") + "/" + joined(strides, n, "x");
}

std::string filter_text(const FilterDescriptor& desc) {
  cudnnDataType_t type{};
  cudnnTensorFormat_t format{};
  int n = 0, dims[kMaxDims] = {};
  check(cudnnGetFilterNdDescriptor(desc, kMaxDims, &type, &format, &n, dims), "cudnnGetFilterNdDescriptor");
  return dtype_text(type) + (format == CUDNN_TENSOR_NHWC ? " NHWC " : " NCHW ") + joined(dims, n, "x");
}

std::string conv_text(const ConvolutionDescriptor& desc) {
  int n = 0, pads[kMaxConvDims] = {}, strides[kMaxConvDims] = {}, dilations[kMaxConvDims] = {}, groups = 0;
  cudnnConvolutionMode_t mode{};
  cudnnDataType_t compute{};
  cudnnMathType_t math{};
  check(cudnnGetConvolutionNdDescriptor(desc, kMaxConvDims, &n, pads, strides, dilations, &mode, &compute),
        "cudnnGetConvolutionNdDescriptor");
  check(cudnnGetConvolutionGroupCount(desc, &groups), "cudnnGetConvolutionGroupCount");
  check(cudnnGetConvolutionMathType(desc, &math), "cudnnGetConvolutionMathType");
  return "pad " + joined(pads, n, ",") + " stride " + joined(strides, n, ",") + " dilation " +
         joined(dilations, n, ",") + " groups " + std::to_string(groups) +
         (mode == CUDNN_CONVOLUTION ? " convolution" : " cross-correlation") + " compute " + dtype_text(compute) +
         " | math " + math_text(math);
}

}  // namespace

std::string conv_descriptor_text(const ConvDescriptors& d, ConvDirection dir) {
  return std::string(direction_text(dir)) + " | x " + tensor_text(d.x) + " | w " + filter_text(d.w) + " | y " +
         tensor_text(d.y) + " | " + conv_text(d.conv);
}

std::string conv_cache_key(const CudaContext& ctx, const ConvDescriptors& d, size_t workspace_limit,
                           ConvDirection dir) {
  const std::string descriptors = conv_descriptor_text(d, dir);  // "fwd | x ... | math FMA"
  return std::string("conv ") + descriptors.substr(0, descriptors.find(" | ")) + " | " + ctx.device_name + " sm_" +
         std::to_string(ctx.compute_capability) + " cuDNN " + std::to_string(cudnnGetVersion()) +
         descriptors.substr(descriptors.find(" | ")) + " | search " + Search(ctx, conv_search_timed(ctx, d, dir)).policy_name() +
         " deterministic " + (ctx.options.deterministic ? "1" : "0") + " | workspace limit " +
         std::to_string(workspace_limit);
}

}  // namespace dnnx::cuda
