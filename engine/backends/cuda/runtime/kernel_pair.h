// Two planned kernels run as one layer, the first's single output kept in the workspace for the
// second: what a fused node (Conv+MaxPool, Gemm+Softmax) runs where its one-kernel form does not
// apply. The buffer holds [first's output, aligned: the layer's scratch][the larger of the halves' workspaces].
#pragma once
#include <cstdint>
#include <memory>

#include "runtime/backend.h"

namespace dnnx::cuda {

constexpr size_t kPairAlign = 256;  // bytes: the first's output, then the halves' workspace

inline size_t pair_aligned(size_t bytes) { return (bytes + kPairAlign - 1) / kPairAlign * kPairAlign; }

// A pair's needs: the inner value as scratch (KernelChoice::scratch_bytes: an activation, not
// bounded by the workspace limit), and the larger of the two kernels' own workspaces.
inline void set_pair_buffers(KernelChoice& pair, size_t inner_bytes, size_t first_workspace, size_t second_workspace) {
  pair.scratch_bytes = pair_aligned(inner_bytes);
  pair.workspace_bytes = first_workspace > second_workspace ? first_workspace : second_workspace;
}

class KernelPair final : public Kernel {
 public:
  // `first` reads the layer's inputs and writes `inner_bytes`; `second` reads that and writes the outputs.
  KernelPair(std::unique_ptr<Kernel> first, std::unique_ptr<Kernel> second, size_t inner_bytes)
      : first_(std::move(first)), second_(std::move(second)), inner_bytes_(pair_aligned(inner_bytes)) {}

  void run(const KernelArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    void* inner = ws;
    void* rest = inner_bytes_ ? ws + inner_bytes_ : nullptr;
    first_->run(KernelArgs{args.inputs, &inner, rest});
    const void* second_in = inner;
    second_->run(KernelArgs{&second_in, args.outputs, rest});
  }

 private:
  std::unique_ptr<Kernel> first_, second_;
  size_t inner_bytes_;
};

}  // namespace dnnx::cuda
