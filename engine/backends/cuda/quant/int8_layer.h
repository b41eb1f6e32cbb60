// What Int8Conv, Int8Gemm and Int8MatMul share on CUDA (ops/quant/qdq_int8.cc has their input
// slots): the plan-time reading of their constant parameters into the epilogue's per-channel
// form, the signed weights of Note [int8 on tensor cores] (int8_kernels.h) and the device copies
// of both. The per-channel numbers are the CPU kernel's (qdq_int8_cpu.cc, row_params and
// run_params), computed by the same float expressions in the same order on the host (no FMA:
// the host code is built for baseline x86-64), so the epilogue starts from the CPU's bits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/backend/cuda_context.h"
#include "backends/cuda/quant/int8_kernels.h"
#include "runtime/backend.h"

namespace dnnx::cuda {

// The input slots (ops/quant/qdq_int8.cc's header comment).
namespace int8_slot {
enum : size_t { kX, kXScale, kXZp, kW, kWScale, kWZp, kYScale, kYZp, kBias, kBiasScale, kRScale, kRZp, kZ, kZScale, kZZp,
                kBnMult, kBnAdd, kCount };
}

// The signed weights w' = w - w_zp[m] of one layer, output channel by output channel, in the
// order the product reads them, and each channel's sum (colsum of Note [int8 on tensor cores]).
struct SignedWeights {
  std::vector<int8_t> values;   // [channels_padded, per_channel]: the padded channels are zero
  std::vector<int32_t> sums;    // [channels]
};

// One fused layer as the CUDA kernels run it: everything but X, Z and the sums, fixed at plan time.
struct Int8Layer {
  int64_t channels = 0;  // output channels (M)
  bool x_unsigned = false;
  int32_t x_zp = 0;      // X's zero point as given
  int8_t x_zp_signed = 0;  // x_zp' of Note [int8 on tensor cores]
  std::vector<int32_t> ibias;  // [M]: the int32 bias in the sums' scale, then minus x_zp' * colsum
  std::vector<float> mult, add;  // [M]
  Int8Epilogue epilogue;  // the scalars (ranges, ratios, flags); its pointers are set per run
};

// Why the CUDA kernels cannot run this node ("" when they can): a parameter that is not a
// constant. The CUDA int8 layers read every scale and zero point at plan time.
std::string int8_constants_refusal(const std::vector<ValueInfo>& inputs);

// The layer's parameters for `channels` output channels (the weights' colsum comes later:
// subtract_zero_point_sums).
Int8Layer int8_layer(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs,
                     int64_t channels);

// w' for weight element (m, i), i < per_channel, read at w[index(m, i)]: "" when every w' fits
// int8, else why not (the layer then stays on the host). channels_padded >= channels.
template <class Index>
std::string signed_weights(const std::vector<ValueInfo>& inputs, int64_t channels, int64_t channels_padded,
                           int64_t per_channel, int64_t per_channel_padded, Index index, SignedWeights& out);

// ibias[m] -= x_zp' * sums[m] (wrapping, as the CPU's row correction).
void subtract_zero_point_sums(Int8Layer& layer, const std::vector<int32_t>& sums);

// The per-channel arrays on the device, uploaded once at plan time.
class Int8Channels {
 public:
  Int8Channels(const CudaContext& ctx, const Int8Layer& layer);
  // The layer's epilogue over these arrays, `sums` [rows, ld].
  Int8Epilogue epilogue(const Int8Layer& layer, const int32_t* sums, int64_t rows, int64_t ld, int64_t plane,
                        const void* z) const;

 private:
  DeviceMemory memory_;  // ibias [M] int32, mult [M], add [M] float
};

// A host array copied to new device memory (synchronously: plan time). Null for 0 bytes.
DeviceMemory upload(const CudaContext& ctx, const void* data, size_t bytes, const char* what);

// The 8-bit value i of a constant input of type int8 or uint8.
int32_t constant_8bit(const ValueInfo& v, int64_t i);

// "uint8xint8": the plan's name for X's and W's types.
std::string int8_types_name(const std::vector<ValueInfo>& inputs);
// "int8, int32 accumulation, requantized to uint8" / "..., float output": the plan's math.
std::string int8_math(const Int8Layer& layer, const std::vector<TensorInfo>& outputs);

// --- the template ---

template <class Index>
std::string signed_weights(const std::vector<ValueInfo>& inputs, int64_t channels, int64_t channels_padded,
                           int64_t per_channel, int64_t per_channel_padded, Index index, SignedWeights& out) {
  using namespace int8_slot;
  const ValueInfo& w = inputs[kW];
  const bool has_zp = inputs.size() > kWZp && inputs[kWZp].present;
  const bool zp_per_channel = has_zp && numel(inputs[kWZp].info.shape) > 1;
  out.values.assign(static_cast<size_t>(channels_padded * per_channel_padded), 0);
  out.sums.assign(static_cast<size_t>(channels), 0);
  for (int64_t m = 0; m < channels; ++m) {
    const int32_t zp = has_zp ? constant_8bit(inputs[kWZp], zp_per_channel ? m : 0) : 0;
    uint32_t sum = 0;  // wraps, as the sums do
    for (int64_t i = 0; i < per_channel; ++i) {
      const int32_t v = constant_8bit(w, index(m, i)) - zp;
      if (v < -128 || v > 127) {
        return "weights minus their zero point leave int8's range (" + std::string(dtype_name(w.info.dtype)) +
               " weights, zero point " + std::to_string(zp) + " of output channel " + std::to_string(m) +
               "): int8 tensor cores multiply signed bytes";
      }
      out.values[static_cast<size_t>(m * per_channel_padded + i)] = static_cast<int8_t>(v);
      sum += static_cast<uint32_t>(v);
    }
    out.sums[static_cast<size_t>(m)] = static_cast<int32_t>(sum);
  }
  return "";
}

// Note [int8 clip] (runtime/passes/fuse_qdq_int8.cc): the CUDA int8 layers take no Clip bounds
// yet: a node with clip_min or clip_max is refused here, so the pass leaves its Clip and the
// float layer between their QDQ pairs on this backend ("" where the node has neither).
std::string int8_clip_refusal(const Node& node);

}  // namespace dnnx::cuda
