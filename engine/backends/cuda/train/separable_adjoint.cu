// Note [separable adjoint]
// Resize's and Pad's gradients once ran as the forward's walk with atomicAdd into each X element
// read: a bilinear 8x upsample adds up to 256 terms into one dX element, in whatever order the
// threads reach it, so the last bits changed from run to run and deterministic=True could not
// hold for a model with a Resize (zoo/fcn_resnet50.onnx) or a reflect Pad. Both ops are
// separable: along each dim, output index o reads X indices that depend on o alone. So dx[i] =
// sum, over the outputs o whose every o_d is in dim d's list for i_d, of prod_d w_d(o_d) * dy[o].
// One thread per dX element walks the product of its dims' lists (the last dim fastest): each
// element is one thread's sum in a fixed order. The work is the forward's: every (output, tap
// combination) pair is visited once. The lists are built on the host from the forward's own tap
// rules (resize_cuda.cc, pad_cuda.cc) and kept in device memory with the plan.
#include "backends/cuda/train/separable_adjoint.h"

#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"

namespace dnnx::cuda {

namespace {

__global__ void separable_adjoint(SeparableAdjoint a, const float* __restrict__ dy, float* __restrict__ dx,
                                  int64_t n) {
  DNNX_GRID_LOOP(i, n) {
    int64_t at[kMaxAdjointDims], begin[kMaxAdjointDims], end[kMaxAdjointDims];
    int64_t rest = i;
    bool done = false;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t index = rest % a.in[d];
      rest /= a.in[d];
      at[d] = begin[d] = a.starts[a.first[d] + index];
      end[d] = a.starts[a.first[d] + index + 1];
      done = done || begin[d] == end[d];
    }
    float sum = 0.0f;
    while (!done) {
      int64_t offset = 0;
      float weight = 1.0f;
      for (int d = 0; d < a.rank; ++d) {
        offset += a.outs[at[d]] * a.out_stride[d];
        weight *= a.weights[at[d]];
      }
      sum += weight * dy[offset];
      int d = a.rank - 1;  // the next combination, the last dim fastest
      while (d >= 0 && ++at[d] == end[d]) {
        at[d] = begin[d];
        --d;
      }
      done = d < 0;
    }
    dx[i] = sum;
  }
}

void copy_to_device(void* to, const void* from, size_t bytes) {
  if (bytes > 0) check(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (a gradient's lists)");
}

}  // namespace

SeparableAdjointLists::SeparableAdjointLists(const CudaContext& ctx, const Shape& x, const Shape& out,
                                             const AdjointReaders& readers) {
  if (x.size() > static_cast<size_t>(kMaxAdjointDims)) {
    throw DeviceError("separable adjoint: " + std::to_string(x.size()) + " dims, more than " +
                      std::to_string(kMaxAdjointDims));
  }
  std::vector<int64_t> starts, outs;
  std::vector<float> weights;
  const std::vector<int64_t> out_strides = packed_strides(out);
  view_.rank = static_cast<int>(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    view_.in[d] = x[d];
    view_.out_stride[d] = out_strides[d];
    view_.first[d] = static_cast<int64_t>(starts.size());
    for (const auto& list : readers[d]) {
      starts.push_back(static_cast<int64_t>(outs.size()));
      for (const auto& [o, w] : list) {
        outs.push_back(o);
        weights.push_back(w);
      }
    }
    starts.push_back(static_cast<int64_t>(outs.size()));
  }
  const size_t starts_bytes = starts.size() * sizeof(int64_t), outs_bytes = outs.size() * sizeof(int64_t);
  const size_t weights_bytes = weights.size() * sizeof(float);
  memory_ = device_alloc(ctx, starts_bytes + outs_bytes + weights_bytes, "cudaMalloc (a gradient's lists)");
  char* base = static_cast<char*>(memory_.get());
  copy_to_device(base, starts.data(), starts_bytes);
  copy_to_device(base + starts_bytes, outs.data(), outs_bytes);
  copy_to_device(base + starts_bytes + outs_bytes, weights.data(), weights_bytes);
  view_.starts = reinterpret_cast<const int64_t*>(base);
  view_.outs = reinterpret_cast<const int64_t*>(base + starts_bytes);
  view_.weights = reinterpret_cast<const float*>(base + starts_bytes + outs_bytes);
}

void launch_separable_adjoint(const SeparableAdjoint& a, const float* dy, float* dx, int64_t x_size,
                              cudaStream_t stream) {
  if (x_size == 0) return;
  separable_adjoint<<<grid_for(x_size), kBlock, 0, stream>>>(a, dy, dx, x_size);
  check_launch("separable adjoint kernel");
}

}  // namespace dnnx::cuda
