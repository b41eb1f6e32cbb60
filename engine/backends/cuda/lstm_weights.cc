#include "backends/cuda/lstm_weights.h"

#include <cstring>

namespace dnnx::cuda {

namespace {

constexpr int kLinearLayers = 8;  // 4 gates x (W, R)
// ONNX's gate block (i=0, o=1, f=2, c=3) for cuDNN's gate (i, f, c, o).
constexpr size_t kOnnxGateOf[4] = {0, 2, 3, 1};

size_t element_count(const TensorDescriptor& desc) {
  cudnnDataType_t type{};
  int n = 0, dims[4] = {}, strides[4] = {};
  check(cudnnGetTensorNdDescriptor(desc, 4, &type, &n, dims, strides), "cudnnGetTensorNdDescriptor");
  size_t count = 1;
  for (int i = 0; i < n; ++i) count *= static_cast<size_t>(dims[i]);
  return count;
}

}  // namespace

void set_lstm_descriptor(const CudaContext& ctx, const LstmDims& d, cudnnMathType_t math, RnnDescriptor& rnn,
                         DropoutDescriptor& dropout, cudnnDataType_t data_type) {
  check(cudnnSetDropoutDescriptor(dropout, ctx.cudnn, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
  const cudnnDirectionMode_t dir_mode = d.num_dir == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL;
  check(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, dir_mode,
                                 CUDNN_LINEAR_INPUT, data_type, CUDNN_DATA_FLOAT, math,
                                 static_cast<int32_t>(d.input), static_cast<int32_t>(d.hidden),
                                 static_cast<int32_t>(d.hidden), 1, dropout, CUDNN_RNN_PADDED_IO_ENABLED),
        "cudnnSetRNNDescriptor_v8");
}

LstmWeightLayout lstm_weight_layout(const CudaContext& ctx, const RnnDescriptor& rnn, const LstmDims& d,
                                    bool has_bias, size_t elem, int layer) {
  LstmWeightLayout layout;
  layout.elem = elem;
  check(cudnnGetRNNWeightSpaceSize(ctx.cudnn, rnn, &layout.bytes), "cudnnGetRNNWeightSpaceSize");
  // cuDNN answers with addresses inside a weight space, so a scratch one is needed to ask.
  const DeviceMemory scratch = device_alloc(layout.bytes, "cudaMalloc (LSTM weight layout)");
  const auto* base = static_cast<const uint8_t*>(scratch.get());
  auto element_at = [&](const void* addr) {
    return static_cast<size_t>(static_cast<const uint8_t*>(addr) - base) / elem;
  };
  const size_t h = static_cast<size_t>(d.hidden), in = static_cast<size_t>(d.input);
  TensorDescriptor m_desc, b_desc;
  for (int dir = 0; dir < d.num_dir; ++dir) {
    for (int lin = 0; lin < kLinearLayers; ++lin) {
      void* m_addr = nullptr;
      void* b_addr = nullptr;
      const int pseudo_layer = layer * static_cast<int>(d.num_dir) + dir;
      check(cudnnGetRNNWeightParams(ctx.cudnn, rnn, pseudo_layer, layout.bytes, scratch.get(), lin, m_desc, &m_addr,
                                    b_desc, &b_addr),
            "cudnnGetRNNWeightParams");
      const bool recurrent = lin >= 4;
      const size_t gate = kOnnxGateOf[lin % 4];
      const size_t cols = recurrent ? h : in;
      if (!m_addr || element_count(m_desc) != h * cols || (has_bias && (!b_addr || element_count(b_desc) != h))) {
        throw DeviceError("cuDNN's LSTM weight layout is not the one expected (linear layer " + std::to_string(lin) +
                          " of direction " + std::to_string(dir) + ", layer " + std::to_string(layer) + ")");
      }
      const size_t dir_block = static_cast<size_t>(dir) * 4 * h * cols;  // W or R of this direction
      layout.copies.push_back({recurrent ? kLstmR : kLstmW, dir_block + gate * h * cols,
                               element_at(m_addr), h * cols});
      if (has_bias) {
        // B [D, 8H]: this direction's Wb (4H) then its Rb (4H).
        const size_t src = static_cast<size_t>(dir) * 8 * h + (recurrent ? 4 * h : 0) + gate * h;
        layout.copies.push_back({kLstmB, src, element_at(b_addr), h});
      }
    }
  }
  return layout;
}

void pack_weights_from_host(const CudaContext& ctx, const LstmWeightLayout& layout, const void* const host[],
                            void* space) {
  std::vector<uint8_t> packed(layout.bytes, 0);  // zero bits: 0.0 in either float type
  const size_t e = layout.elem;
  for (const WeightCopy& c : layout.copies) {
    std::memcpy(packed.data() + c.dst * e, static_cast<const uint8_t*>(host[c.input]) + c.src * e, c.count * e);
  }
  check(cudaMemcpyAsync(space, packed.data(), layout.bytes, cudaMemcpyHostToDevice, ctx.stream),
        "cudaMemcpyAsync (LSTM weights)");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");  // `packed` dies here
}

void pack_weights_on_device(const CudaContext& ctx, const LstmWeightLayout& layout, const void* const* inputs,
                            void* space) {
  check(cudaMemsetAsync(space, 0, layout.bytes, ctx.stream), "cudaMemsetAsync (LSTM weights)");
  auto* dst = static_cast<uint8_t*>(space);
  const size_t e = layout.elem;
  for (const WeightCopy& c : layout.copies) {
    check(cudaMemcpyAsync(dst + c.dst * e, static_cast<const uint8_t*>(inputs[c.input]) + c.src * e, c.count * e,
                          cudaMemcpyDeviceToDevice, ctx.stream),
          "cudaMemcpyAsync (LSTM weights)");
  }
}

void unpack_weights_on_device(const CudaContext& ctx, const LstmWeightLayout& layout, const void* space,
                              float* const* d_inputs) {
  const auto* src = static_cast<const float*>(space);
  for (const WeightCopy& c : layout.copies) {
    if (!d_inputs[c.input]) continue;
    check(cudaMemcpyAsync(d_inputs[c.input] + c.src, src + c.dst, c.count * sizeof(float), cudaMemcpyDeviceToDevice,
                          ctx.stream),
          "cudaMemcpyAsync (LSTM weight gradients)");
  }
}

}  // namespace dnnx::cuda
