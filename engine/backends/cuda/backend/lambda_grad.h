// A gradient kernel that is one lambda over the call's buffers, and its GradChoice: the
// gradient form of simple_kernel.h's LambdaKernel, for the gradients that are one launch
// (Reduce*, Resize).
#pragma once
#include <functional>
#include <memory>
#include <utility>

#include "runtime/training.h"

namespace dnnx::cuda {

class LambdaGradKernel final : public GradKernel {
 public:
  explicit LambdaGradKernel(std::function<void(const GradArgs&)> body) : body_(std::move(body)) {}
  void run(const GradArgs& args) const override { body_(args); }

 private:
  std::function<void(const GradArgs&)> body_;
};

inline GradChoice make_grad_choice(std::string algorithm, std::function<void(const GradArgs&)> body,
                                   size_t workspace_bytes = 0) {
  GradChoice choice;
  choice.algorithm = std::move(algorithm);
  choice.workspace_bytes = workspace_bytes;
  choice.kernel = std::make_unique<LambdaGradKernel>(std::move(body));
  return choice;
}

}  // namespace dnnx::cuda
