// Concat on the CPU, for any element size. Every input is viewed as [outer, chunk] where outer
// is the product of the dims before `axis` and chunk = dims[axis] * (product after) * elem
// bytes; the output's row o is input 0's row o, then input 1's, ...: one memcpy per input per
// outer row.
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"
#include "ops/layout/concat.h"

namespace dnnx {

namespace {

class ConcatKernel final : public Kernel {
 public:
  // chunks: the bytes of one outer row of every input, in input order.
  ConcatKernel(int64_t outer, std::vector<size_t> chunks) : outer_(outer), chunks_(std::move(chunks)) {
    for (size_t c : chunks_) row_bytes_ += c;
  }

  void run(const KernelArgs& args) const override {
    uint8_t* y = args.out<uint8_t>(0);
    size_t column = 0;  // where input i starts within an output row
    for (size_t i = 0; i < chunks_.size(); ++i) {
      const size_t chunk = chunks_[i];
      if (chunk == 0) continue;
      const uint8_t* x = args.in<uint8_t>(i);
      for (int64_t o = 0; o < outer_; ++o) std::memcpy(y + o * row_bytes_ + column, x + o * chunk, chunk);
      column += chunk;
    }
  }

 private:
  int64_t outer_;
  std::vector<size_t> chunks_;
  size_t row_bytes_ = 0;
};

KernelChoice concat_factory(const Node& node, const std::vector<ValueInfo>& inputs,
                            const std::vector<TensorInfo>&) {
  ConcatLayout layout = concat_layout(node, inputs);
  KernelChoice choice;
  choice.algorithm = layout.outer == 1 ? "copy" : "strided copy";
  choice.kernel = std::make_unique<ConcatKernel>(layout.outer, std::move(layout.chunk_bytes));
  return choice;
}

}  // namespace

void register_cpu_concat_kernels(KernelRegistry& r) { r.add("Concat", concat_factory).with_dtypes(movable_types()); }

}  // namespace dnnx
