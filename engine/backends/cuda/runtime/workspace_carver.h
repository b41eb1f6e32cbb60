// One workspace allocation carved into parts, each starting on a 256-byte boundary (cuDNN's and
// the vectorized kernels' alignment): part() hands out byte offsets from the workspace's start.
#pragma once
#include <cstddef>

namespace dnnx::cuda {

class WorkspaceCarver {
 public:
  static constexpr size_t kAlignment = 256;

  // The offset of the next part, `bytes` long (a part of 0 bytes takes no room).
  size_t part(size_t bytes) {
    const size_t offset = at_;
    at_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return offset;
  }

  // The bytes of every part so far: the workspace's size.
  size_t total() const { return at_; }

 private:
  size_t at_ = 0;
};

}  // namespace dnnx::cuda
