// The gradients of LeakyRelu, Elu, Selu and Clip, written once for every backend (the CPU's
// backends/cpu/elementwise/param_activation_grad_cpu.cc and CUDA's
// param_activation_grad_kernels.cu), from the kept input x, output y and dY, float32:
//   LeakyRelu  dX = dY where x > 0, else alpha * dY
//   Elu        dX = dY where x > 0, else (y + alpha) * dY             (alpha * e^x, from y)
//   Selu       dX = gamma * dY where x > 0, else (y + gamma * alpha) * dY
//   Clip       dX = dY where lo < x < hi, else 0                      (PyTorch's hardtanh rule:
//              a value at a bound passes nothing, so Relu6's gradient at 0 and 6 is 0)
// At x == 0 each takes its x <= 0 branch, as PyTorch does.
#pragma once
#include <vector>

#ifndef __CUDACC__
#include "ops/op.h"
#endif

#ifdef __CUDACC__
#define DNNX_GRAD_HD __host__ __device__
#else
#define DNNX_GRAD_HD
#endif

namespace dnnx {

enum class ParamActivationGrad { LeakyRelu, Elu, Selu, Clip };

// Selu's defaults, as ONNX gives them (float32 roundings of 1.6732632423543772 and
// 1.0507009873554805), for the forward kernels and the gradient alike.
constexpr float kSeluAlpha = 1.67326319217681884765625f;
constexpr float kSeluGamma = 1.05070102214813232421875f;

// alpha, gamma: the node's attributes (LeakyRelu, Elu and Selu); lo, hi: Clip's bounds.
struct ParamActivationSlope {
  ParamActivationGrad kind = ParamActivationGrad::LeakyRelu;
  float alpha = 0.0f, gamma = 1.0f, lo = 0.0f, hi = 0.0f;

  DNNX_GRAD_HD float operator()(float x, float y, float dy) const {
    switch (kind) {
      case ParamActivationGrad::LeakyRelu: return x > 0.0f ? dy : alpha * dy;
      case ParamActivationGrad::Elu: return x > 0.0f ? dy : (y + alpha) * dy;
      case ParamActivationGrad::Selu: return x > 0.0f ? gamma * dy : (y + gamma * alpha) * dy;
      case ParamActivationGrad::Clip: return x > lo && x < hi ? dy : 0.0f;
    }
    return 0.0f;
  }
};

#ifndef __CUDACC__
// A node's gradient as planned: the slope (its attributes; Clip's bounds from the attributes
// before opset 11, else the type's limits) and whether Clip's min and max come from inputs,
// read at run time. Refuses (UnsupportedModelError naming the node) a gradient asked for Clip's
// min or max: they are bounds, not weights.
struct ParamActivationGradPlan {
  ParamActivationSlope slope;
  bool min_input = false, max_input = false;
};
ParamActivationGradPlan param_activation_grad_plan(const Node& node, const std::vector<ValueInfo>& inputs,
                                                   const std::vector<bool>& needs_grad);
#endif

}  // namespace dnnx

#undef DNNX_GRAD_HD
