// DynamicQuantizeLinear's two steps, shared with com.microsoft's DynamicQuantizeMatMul.
#pragma once
#include <cstdint>

namespace dnnx {

struct DynamicQuantParams {
  float scale = 1.0f;
  uint8_t zero_point = 0;
};

// uint8 parameters from x's range widened to hold 0 (onnxruntime's GetQuantizationParameter).
DynamicQuantParams dynamic_quant_params(const float* x, int64_t n);
// y = saturate(round_half_even(x / scale) + zero_point), uint8.
void dynamic_quantize(const float* x, int64_t n, const DynamicQuantParams& p, uint8_t* y);

}  // namespace dnnx
