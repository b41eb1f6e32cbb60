// CenterCropPad on the CPU, for any element size: y zeroed (all-zero bytes are 0 in every dnnx
// dtype), then the centred window copied one innermost run (a memcpy) at a time.
#include <cstring>

#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/center_crop_pad.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct CropPadPlan {
  std::vector<CropPadDim> dims;
  std::vector<int64_t> in_strides, out_strides;  // in elements, of x and y
  int64_t out_total = 1;
  size_t elem = 0;
};

CropPadPlan crop_pad_plan(const Node& node, const std::vector<ValueInfo>& inputs) {
  CropPadPlan p;
  p.dims = center_crop_pad_dims(node, inputs);
  p.elem = dtype_size(inputs[0].info.dtype);
  const Shape& x = inputs[0].info.shape;
  const size_t rank = x.size();
  p.in_strides.assign(rank, 1);
  p.out_strides.assign(rank, 1);
  for (size_t d = rank; d-- > 1;) {
    p.in_strides[d - 1] = p.in_strides[d] * x[d];
    p.out_strides[d - 1] = p.out_strides[d] * p.dims[d].out;
  }
  for (const CropPadDim& d : p.dims) p.out_total *= d.out;
  return p;
}

class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(CropPadPlan p) : p_(std::move(p)) {}
  void run(const KernelArgs& args) const override {
    const auto* x = args.in<uint8_t>(0);
    auto* y = args.out<uint8_t>(0);
    const std::vector<CropPadDim>& dims = p_.dims;
    const size_t rank = dims.size();
    std::memset(y, 0, static_cast<size_t>(p_.out_total) * p_.elem);
    if (rank == 0) {  // a scalar: nothing to crop or pad
      std::memcpy(y, x, p_.elem);
      return;
    }
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= dims[d].count;
    const CropPadDim& last = dims[rank - 1];
    if (rows == 0 || last.count == 0) return;
    const size_t run_bytes = static_cast<size_t>(last.count) * p_.elem;
    std::vector<int64_t> at(rank - 1, 0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t in_off = last.in_start, out_off = last.out_start;
      for (size_t d = 0; d + 1 < rank; ++d) {
        in_off += (dims[d].in_start + at[d]) * p_.in_strides[d];
        out_off += (dims[d].out_start + at[d]) * p_.out_strides[d];
      }
      std::memcpy(y + out_off * p_.elem, x + in_off * p_.elem, run_bytes);
      for (size_t d = rank - 1; d-- > 0;) {
        if (++at[d] < dims[d].count) break;
        at[d] = 0;
      }
    }
  }

 private:
  CropPadPlan p_;
};

KernelChoice plan_center_crop_pad(const Node& node, const std::vector<ValueInfo>& inputs,
                                  const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "zero+window copy";
  choice.kernel = std::make_unique<CenterCropPadKernel>(crop_pad_plan(node, inputs));
  return choice;
}

}  // namespace

void register_cpu_center_crop_pad_kernels(KernelRegistry& r) { r.add("CenterCropPad", plan_center_crop_pad); }

}  // namespace dnnx
