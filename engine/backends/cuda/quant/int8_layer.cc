// The CUDA int8 layers' plan-time parameters (int8_layer.h).
#include "backends/cuda/quant/int8_layer.h"

#include <algorithm>

namespace dnnx::cuda {

using namespace int8_slot;

namespace {

bool present(const std::vector<ValueInfo>& inputs, size_t i) { return i < inputs.size() && inputs[i].present; }

bool per_channel(const std::vector<ValueInfo>& inputs, size_t i) {
  return present(inputs, i) && numel(inputs[i].info.shape) > 1;
}

const float* floats(const std::vector<ValueInfo>& inputs, size_t i) { return inputs[i].constant->as<float>(); }

// Type t's range around zero point zp, floored at zp after a Relu (the CPU's range_of).
void range_of(DType t, int32_t zp, bool relu, int32_t& lo, int32_t& hi) {
  lo = t == DType::Int8 ? -128 : 0;
  hi = t == DType::Int8 ? 127 : 255;
  if (relu) lo = std::max(lo, zp);
}

}  // namespace

int32_t constant_8bit(const ValueInfo& v, int64_t i) {
  const uint8_t byte = v.constant->data[static_cast<size_t>(i)];
  return v.info.dtype == DType::Int8 ? static_cast<int32_t>(static_cast<int8_t>(byte)) : static_cast<int32_t>(byte);
}

std::string int8_constants_refusal(const std::vector<ValueInfo>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < kCount; ++i) {
    if (i == kX || i == kZ || !inputs[i].present || inputs[i].constant) continue;
    return "input " + std::to_string(i) + " (a scale, zero point, bias or weight) is not a constant: the CUDA int8 "
           "kernels read them at plan time";
  }
  if (!present(inputs, kW) || !present(inputs, kXScale) || !present(inputs, kWScale)) {
    return "the layer has no constant weights and scales";
  }
  return "";
}

// The CPU's row_params and run_params (backends/cpu/quant/qdq_int8_cpu.cc), expression for
// expression: the same float operations in the same order give the same bits.
Int8Layer int8_layer(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs,
                     int64_t channels) {
  Int8Layer layer;
  layer.channels = channels;
  Int8Epilogue& e = layer.epilogue;
  e.relu = node.attr_int("relu", 0) != 0;
  e.float_out = !present(inputs, kYScale);
  e.residual = present(inputs, kZ);
  const DType y_type = outputs[0].dtype;
  e.y_signed = y_type == DType::Int8;
  layer.x_unsigned = inputs[kX].info.dtype == DType::UInt8;
  layer.x_zp = present(inputs, kXZp) ? constant_8bit(inputs[kXZp], 0) : 0;
  layer.x_zp_signed = static_cast<int8_t>(layer.x_zp - (layer.x_unsigned ? 128 : 0));

  const bool bn = present(inputs, kBnMult) && present(inputs, kBnAdd);
  const bool has_bias = present(inputs, kBias);
  const bool int_bias = has_bias && inputs[kBias].info.dtype == DType::Int32;
  const float x_scale = floats(inputs, kXScale)[0];
  const float* w_scale = floats(inputs, kWScale);
  const bool w_scale_per_channel = per_channel(inputs, kWScale);
  const float out_scale = e.float_out ? 1.0f : floats(inputs, e.residual ? kRScale : kYScale)[0];
  layer.ibias.assign(static_cast<size_t>(channels), 0);
  layer.mult.assign(static_cast<size_t>(channels), 0.0f);
  layer.add.assign(static_cast<size_t>(channels), 0.0f);
  for (int64_t m = 0; m < channels; ++m) {
    const auto i = static_cast<size_t>(m);
    const float xw = x_scale * w_scale[w_scale_per_channel ? m : 0];
    float bias = 0;  // the float bias (an int32 one of another scale dequantized)
    if (has_bias && !int_bias) {
      bias = floats(inputs, kBias)[m];
    } else if (has_bias) {
      const int32_t b = inputs[kBias].constant->as<int32_t>()[m];
      // no bias_scale: QLinearConv's bias, in the sums' own scale x_scale * w_scale[m]
      const float bs = present(inputs, kBiasScale) ? floats(inputs, kBiasScale)[per_channel(inputs, kBiasScale) ? m : 0] : xw;
      if (bs == xw) layer.ibias[i] = b;
      else bias = static_cast<float>(b) * bs;
    }
    if (bn) {  // v * bn_mult + bn_add, with v = float(sum + ibias) * xw + bias
      const float s = floats(inputs, kBnMult)[m], a = floats(inputs, kBnAdd)[m];
      layer.mult[i] = xw * s / out_scale;
      layer.add[i] = (bias * s + a) / out_scale;
    } else {
      layer.mult[i] = xw / out_scale;
      layer.add[i] = bias / out_scale;
    }
  }
  if (e.float_out) return layer;
  e.y_zp = present(inputs, kYZp) ? constant_8bit(inputs[kYZp], 0) : 0;
  range_of(y_type, e.y_zp, e.relu, e.y_lo, e.y_hi);
  if (e.residual) {
    e.r_zp = present(inputs, kRZp) ? constant_8bit(inputs[kRZp], 0) : 0;  // r has Y's type
    e.z_zp = present(inputs, kZZp) ? constant_8bit(inputs[kZZp], 0) : 0;
    e.z_signed = inputs[kZ].info.dtype == DType::Int8;
    range_of(y_type, e.r_zp, false, e.r_lo, e.r_hi);
    const float r_scale = floats(inputs, kRScale)[0], z_scale = floats(inputs, kZScale)[0];
    const float y_scale = floats(inputs, kYScale)[0];
    e.r_ratio = r_scale / y_scale;  // ResidualParams::r_ratio and z_ratio
    e.z_ratio = z_scale / y_scale;
  }
  return layer;
}

void subtract_zero_point_sums(Int8Layer& layer, const std::vector<int32_t>& sums) {
  const auto zp = static_cast<uint32_t>(static_cast<int32_t>(layer.x_zp_signed));
  for (size_t m = 0; m < layer.ibias.size(); ++m) {
    layer.ibias[m] = static_cast<int32_t>(static_cast<uint32_t>(layer.ibias[m]) - zp * static_cast<uint32_t>(sums[m]));
  }
}

DeviceMemory upload(const CudaContext& ctx, const void* data, size_t bytes, const char* what) {
  DeviceMemory memory = device_alloc(ctx, bytes, what);
  if (bytes == 0) return memory;
  check(cudaMemcpyAsync(memory.get(), data, bytes, cudaMemcpyHostToDevice, ctx.stream), what);
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");
  return memory;
}

Int8Channels::Int8Channels(const CudaContext& ctx, const Int8Layer& layer) {
  const size_t m = static_cast<size_t>(layer.channels);
  std::vector<uint8_t> bytes(3 * m * 4);  // int32 and float: 4 bytes each
  std::copy_n(reinterpret_cast<const uint8_t*>(layer.ibias.data()), m * 4, bytes.data());
  std::copy_n(reinterpret_cast<const uint8_t*>(layer.mult.data()), m * 4, bytes.data() + m * 4);
  std::copy_n(reinterpret_cast<const uint8_t*>(layer.add.data()), m * 4, bytes.data() + 2 * m * 4);
  memory_ = upload(ctx, bytes.data(), bytes.size(), "cudaMemcpyAsync (int8 layer parameters)");
}

Int8Epilogue Int8Channels::epilogue(const Int8Layer& layer, const int32_t* sums, int64_t rows, int64_t ld,
                                    int64_t plane, const void* z) const {
  Int8Epilogue e = layer.epilogue;
  const auto* base = static_cast<const uint8_t*>(memory_.get());
  const size_t m = static_cast<size_t>(layer.channels);
  e.ibias = reinterpret_cast<const int32_t*>(base);
  e.mult = reinterpret_cast<const float*>(base + m * 4);
  e.add = reinterpret_cast<const float*>(base + 2 * m * 4);
  e.sums = sums;
  e.rows = rows;
  e.ld = ld;
  e.channels = layer.channels;
  e.plane = plane;
  e.z = z;
  return e;
}

std::string int8_types_name(const std::vector<ValueInfo>& inputs) {
  return std::string(dtype_name(inputs[kX].info.dtype)) + "x" + dtype_name(inputs[kW].info.dtype);
}

std::string int8_math(const Int8Layer& layer, const std::vector<TensorInfo>& outputs) {
  return layer.epilogue.float_out ? std::string("int8, int32 accumulation, float output")
                                  : "int8, int32 accumulation, requantized to " + std::string(dtype_name(outputs[0].dtype));
}

std::string int8_clip_refusal(const Node& node) {
  if (!node.has_attr("clip_min") && !node.has_attr("clip_max")) return "";
  return "the CUDA int8 layers take no Clip bounds (clip_min, clip_max): the Clip stays a node of its own";
}

}  // namespace dnnx::cuda
