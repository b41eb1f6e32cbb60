// NonZero on CUDA as a staged kernel (Note [device staged kernels] in runtime/staged_kernel.h;
// the kernels: Note [device nonzero] in nonzero_kernels.h): X of any type a device holds (every
// type but string) -> int64 [rank, nnz], the coordinates of the nonzero elements in row-major
// order (a scalar counts as shape [1]), as ops/indexing/nonzero_compress.cc computes on the host.
// The plan stops before the node (Note [staged plans]); nnz crosses to the host as one 8-byte
// copy, and the rest is planned for it.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/indexing/nonzero_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/small_readback.h"

namespace dnnx::cuda {

namespace {

// The bits of an element of `t` that make it nonzero (Note [device nonzero]): the magnitude of
// the float types with a signed zero; every bit of the integers, bool, int4/uint4 and the fnuz
// float8 types (whose only zero is 0x00; 0x80 is their NaN).
uint64_t nonzero_mask(DType t) {
  switch (t) {
    case DType::Float32: return 0x7fffffffu;
    case DType::Float64: return 0x7fffffffffffffffull;
    case DType::Float16:
    case DType::BFloat16: return 0x7fffu;
    case DType::Float8E4M3FN:
    case DType::Float8E5M2: return 0x7fu;
    case DType::Float4E2M1: return 0x07u;  // one element per byte, its sign bit 0x08
    default: return ~uint64_t{0};
  }
}

// Every type a device value may have (strings are host values, Note [string tensors]).
std::vector<DType> device_types() {
  std::vector<DType> types;
  for (int t = 0; t < kDTypeCount; ++t) {
    if (static_cast<DType>(t) != DType::String) types.push_back(static_cast<DType>(t));
  }
  return types;
}

class NonzeroKernel final : public StagedKernel {
 public:
  NonzeroKernel(const CudaContext& ctx, NonzeroInput in, NonzeroDims dims)
      : ctx_(ctx), in_(in), dims_(dims), tiles_(nonzero_tiles(in.count)) {}

  // workspace: tile_offsets [tiles + 1] int64.
  static size_t workspace_bytes(int64_t count) { return static_cast<size_t>(nonzero_tiles(count) + 1) * sizeof(int64_t); }

  StagedCount count(const StagedArgs& args) const override {
    int64_t* offsets = static_cast<int64_t*>(args.workspace);
    launch_nonzero_count(input(args), offsets, ctx_.stream);
    int64_t total = 0;  // the one small copy: the count, after the kernels before it
    read_back_small(ctx_.stream, offsets + tiles_, &total, sizeof(total), "NonZero's count");
    StagedCount out;
    out.outputs.push_back(TensorInfo{{dims_.rank, total}, DType::Int64});
    return out;
  }

  void write(const StagedArgs& args, void* const* outputs) const override {
    launch_nonzero_write(input(args), dims_, static_cast<const int64_t*>(args.workspace),
                         static_cast<int64_t*>(outputs[0]), ctx_.stream);
  }

 private:
  NonzeroInput input(const StagedArgs& args) const {
    NonzeroInput in = in_;
    in.x = args.in(0);
    return in;
  }

  const CudaContext& ctx_;
  const NonzeroInput in_;
  const NonzeroDims dims_;
  const int64_t tiles_;
};

StagedChoice plan_nonzero(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs) {
  if (inputs.empty() || !inputs[0].present) node_fail<InvalidModelError>(node, "X is a required input");
  const TensorInfo& x = inputs[0].info;
  const Shape shape = x.shape.empty() ? Shape{1} : x.shape;
  if (shape.size() > static_cast<size_t>(kMaxNonzeroDims)) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes at most " + std::to_string(kMaxNonzeroDims) +
                                               " dims, not X " + shape_str(x.shape));
  }
  NonzeroInput in;
  in.count = numel(x.shape);
  in.elem_bytes = static_cast<int>(dtype_size(x.dtype));
  in.mask = nonzero_mask(x.dtype);
  if (nonzero_tiles(in.count) > int64_t{0x7fffffff}) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes at most 2^31 tiles of " +
                                               std::to_string(kNonzeroTile) + " elements, not X " + shape_str(x.shape));
  }
  NonzeroDims dims;
  dims.rank = static_cast<int>(shape.size());
  for (int d = 0; d < dims.rank; ++d) dims.dim[d] = shape[d];
  StagedChoice choice;
  choice.algorithm = "two-pass count scan";
  choice.workspace_bytes = NonzeroKernel::workspace_bytes(in.count);
  choice.kernel = std::make_unique<NonzeroKernel>(ctx, in, dims);
  return choice;
}

}  // namespace

void register_cuda_nonzero_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add_staged("NonZero", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs) {
     return plan_nonzero(ctx, node, inputs);
   }).with_dtypes(device_types());
}

}  // namespace dnnx::cuda
