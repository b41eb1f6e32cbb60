// cuDNN's int8 convolution through cudnn-frontend's graph API (int8_conv_graph.cc is the one
// file of this family that includes its headers; a build without them has no int8 conv, and the
// layer runs on the host with that reason), for Int8Conv (int8_conv_cuda.cc):
//   x [N, Cp, Hp, Wp] int8 channels-last (strides [Hp Wp Cp, 1, Wp Cp, Cp]), already padded
//   w [Mp, Cp / group, kh, kw] int8 channels-last (KRSC)
//   -> sums [N, Mp, OH, OW] int32 channels-last, unpadded, the given strides and dilations
// io INT8, intermediate and compute INT32, the output INT32 through an identity pointwise node
// (cudnn-frontend's own int8 sample, samples/cpp/convolution/int8_fprop.cpp, does the same).
// int8 convolutions need sm_75 or newer (the build's architectures start at sm_80) and, for the
// IMMA kernels, channel counts that are multiples of 4: the caller pads Cp and Mp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda/backend/cuda_context.h"

namespace dnnx::cuda {

struct Int8ConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0;  // X as cuDNN reads it (padded: c = Cp, h = Hp, w = Wp)
  int64_t m = 0, kh = 0, kw = 0;       // W [m, c / group, kh, kw]
  int64_t group = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t oh = 0, ow = 0;              // the sums' spatial dims
};

// A built cuDNN plan for one shape.
class Int8ConvGraph {
 public:
  virtual ~Int8ConvGraph() = default;
  virtual size_t workspace_bytes() const = 0;
  // x, w and sums as in the file comment; the workspace of workspace_bytes().
  virtual void run(const CudaContext& ctx, const int8_t* x, const int8_t* w, int32_t* sums, void* workspace) const = 0;
  // Which of cuDNN's plans runs and why, for plan() (Note [int8 conv plans], int8_conv_graph.cc).
  virtual std::string choice() const = 0;
};

// The plan, validated, checked for support and built here (every plan cuDNN lists, one chosen:
// Note [int8 conv plans]); null with `why` (the step that refused and cuDNN's message, or every
// plan's workspace over ctx's limit) when cuDNN cannot run it.
std::unique_ptr<Int8ConvGraph> make_int8_conv_graph(const CudaContext& ctx, const Int8ConvShape& s, std::string& why);

}  // namespace dnnx::cuda
