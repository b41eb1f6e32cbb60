// BitCast on the CPU (Note [bitcast] in ops/layout/bitcast.h): a copy of the bytes, any type;
// a 4-bit target keeps each byte's low half, a bool target gives 0 or 1 per byte.
#include <cstring>

#include "backends/cpu/runtime/element_type.h"
#include "ops/layout/bitcast.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

enum class BitCastMode { Copy, LowNibble, Bool };

class BitCastKernel final : public Kernel {
 public:
  BitCastKernel(int64_t n, size_t bytes, BitCastMode mode) : n_(n), bytes_(bytes), mode_(mode) {}
  void run(const KernelArgs& args) const override {
    if (mode_ == BitCastMode::Copy) {
      if (bytes_) std::memcpy(args.outputs[0], args.inputs[0], bytes_);
      return;
    }
    const auto* x = args.in<uint8_t>(0);  // one byte per element in both modes
    auto* y = args.out<uint8_t>(0);
    if (mode_ == BitCastMode::LowNibble) {
      for (int64_t i = 0; i < n_; ++i) y[i] = static_cast<uint8_t>(x[i] & 0xF);
    } else {
      for (int64_t i = 0; i < n_; ++i) y[i] = x[i] != 0 ? 1 : 0;
    }
  }

 private:
  int64_t n_;
  size_t bytes_;
  BitCastMode mode_;
};

KernelChoice plan_bitcast(const Node& node, const std::vector<ValueInfo>& inputs,
                          const std::vector<TensorInfo>& outputs) {
  const DType from = inputs[0].info.dtype, to = outputs[0].dtype;
  // The op's inference made the widths equal; a host layer inside a device plan sees float16,
  // bfloat16 (and the importer's float64) values as float32 (Note [host fallback]), whose bits
  // are not the model's: refused rather than read past the input.
  if (bit_width(from) != bit_width(to)) {
    node_fail<UnsupportedModelError>(node, std::string("BitCast of ") + dtype_name(from) + " to " + dtype_name(to) +
                                               " here: on a device float16, bfloat16 and float64 values are "
                                               "float32, whose bits are not the model's (run it on the CPU)");
  }
  BitCastMode mode = BitCastMode::Copy;
  if (bit_width(to) == 4) mode = BitCastMode::LowNibble;
  else if (to == DType::Bool && from != DType::Bool) mode = BitCastMode::Bool;
  KernelChoice choice;
  choice.algorithm = std::string(dtype_name(from)) + "->" + dtype_name(to) +
                     (mode == BitCastMode::Copy ? " (byte copy)" : mode == BitCastMode::Bool ? " (bytes to 0/1)" : " (low 4 bits)");
  choice.kernel = std::make_unique<BitCastKernel>(numel(outputs[0].shape), outputs[0].bytes(), mode);
  return choice;
}

}  // namespace

void register_cpu_bitcast_kernels(KernelRegistry& r) { r.add("BitCast", plan_bitcast).with_dtypes(movable_types()); }

}  // namespace dnnx
