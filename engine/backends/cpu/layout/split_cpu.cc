// Split on the CPU, for any element size: X viewed as [outer, dim * inner]; output i takes
// [outer, size_i * inner] from each outer row, one memcpy per output per row (Concat reversed).
// Its gradient (float32) is Concat: each dY_i into its part of dX's rows.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/runtime/element_type.h"
#include "runtime/kernel_registry.h"
#include "ops/layout/split.h"

namespace dnnx {

namespace {

class SplitKernel final : public Kernel {
 public:
  // chunks: the bytes of one outer row of every output, in output order.
  SplitKernel(int64_t outer, std::vector<size_t> chunks) : outer_(outer), chunks_(std::move(chunks)) {
    for (size_t c : chunks_) row_bytes_ += c;
  }

  void run(const KernelArgs& args) const override {
    const uint8_t* x = args.in<uint8_t>(0);
    size_t column = 0;  // where output i starts within an input row
    for (size_t i = 0; i < chunks_.size(); ++i) {
      const size_t chunk = chunks_[i];
      uint8_t* y = args.out<uint8_t>(i);
      if (y && chunk) {
        for (int64_t o = 0; o < outer_; ++o) std::memcpy(y + o * chunk, x + o * row_bytes_ + column, chunk);
      }
      column += chunk;
    }
  }

 private:
  int64_t outer_;
  std::vector<size_t> chunks_;
  size_t row_bytes_ = 0;
};

// X viewed as [outer, row]: each output's elements of one row, in output order.
struct SplitRows {
  int64_t outer = 1;
  std::vector<int64_t> sizes;
};

SplitRows split_rows(const Node& node, const std::vector<ValueInfo>& inputs) {
  const Shape& x = inputs[0].info.shape;
  const SplitParts parts = split_parts(node, inputs, x);
  SplitRows rows;
  int64_t inner = 1;
  for (int64_t d = 0; d < parts.axis; ++d) rows.outer *= x[d];
  for (size_t d = static_cast<size_t>(parts.axis) + 1; d < x.size(); ++d) inner *= x[d];
  for (int64_t size : parts.sizes) rows.sizes.push_back(size * inner);
  return rows;
}

KernelChoice plan_split(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const SplitRows rows = split_rows(node, inputs);
  std::vector<size_t> chunks;
  for (int64_t size : rows.sizes) chunks.push_back(static_cast<size_t>(size) * dtype_size(inputs[0].info.dtype));
  KernelChoice choice;
  choice.algorithm = rows.outer == 1 ? "copy" : "strided copy";
  choice.kernel = std::make_unique<SplitKernel>(rows.outer, std::move(chunks));
  return choice;
}

// Concat's forward: dX's row o is every dY_i's row o in turn (zeros where no gradient reaches
// output i). sizes: the floats of one outer row of each output.
class SplitGradKernel final : public GradKernel {
 public:
  SplitGradKernel(int64_t outer, std::vector<int64_t> sizes) : outer_(outer), sizes_(std::move(sizes)) {
    for (int64_t s : sizes_) row_ += s;
  }

  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    int64_t column = 0;
    for (size_t i = 0; i < sizes_.size(); column += sizes_[i], ++i) {
      const float* dy = args.d_outputs[i];
      for (int64_t o = 0; o < outer_; ++o) {
        float* to = dx + o * row_ + column;
        if (dy) {
          std::copy(dy + o * sizes_[i], dy + (o + 1) * sizes_[i], to);
        } else {
          std::fill(to, to + sizes_[i], 0.0f);
        }
      }
    }
  }

 private:
  int64_t outer_;
  std::vector<int64_t> sizes_;
  int64_t row_ = 0;
};

GradChoice plan_split_grad(const GradRequest& r) {
  SplitRows rows = split_rows(r.node, r.inputs);
  GradChoice choice;
  choice.algorithm = "row copy";
  choice.kernel = std::make_unique<SplitGradKernel>(rows.outer, std::move(rows.sizes));
  return choice;
}

}  // namespace

void register_cpu_split_kernels(KernelRegistry& r) {
  r.add("Split", plan_split).with_dtypes(movable_types()).with_gradient(plan_split_grad);
}

}  // namespace dnnx
