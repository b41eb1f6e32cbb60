#include "backends/cuda/rnn/rnn_weights.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "ops/rnn/lstm_stack.h"

namespace dnnx::cuda {

namespace {

size_t element_count(const TensorDescriptor& desc) {
  cudnnDataType_t type{};
  int n = 0, dims[4] = {}, strides[4] = {};
  check(cudnnGetTensorNdDescriptor(desc, 4, &type, &n, dims, strides), "cudnnGetTensorNdDescriptor");
  size_t count = 1;
  for (int i = 0; i < n; ++i) count *= static_cast<size_t>(dims[i]);
  return count;
}

}  // namespace

void set_rnn_descriptor(const CudaContext& ctx, const CudnnCell& cell, const LstmDims& d, cudnnMathType_t math,
                        RnnDescriptor& rnn, DropoutDescriptor& dropout, cudnnDataType_t data_type, int32_t layers) {
  // No dropout: no random states are needed (cuDNN draws nothing at probability 0).
  check(cudnnSetDropoutDescriptor(dropout, ctx.cudnn, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
  const cudnnDirectionMode_t dir_mode = d.num_dir == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL;
  const auto algo = static_cast<cudnnRNNAlgo_t>(ctx.hooks.rnn_algo);  // standard unless a probe asks
  check(cudnnSetRNNDescriptor_v8(rnn, algo, cell.mode, CUDNN_RNN_DOUBLE_BIAS, dir_mode,
                                 CUDNN_LINEAR_INPUT, data_type, CUDNN_DATA_FLOAT, math,
                                 static_cast<int32_t>(d.input), static_cast<int32_t>(d.hidden),
                                 static_cast<int32_t>(d.hidden), layers, dropout,
                                 layers == 1 ? CUDNN_RNN_PADDED_IO_ENABLED : CUDNN_RNN_PADDED_IO_DISABLED),
        "cudnnSetRNNDescriptor_v8");
  if (algo == CUDNN_RNN_ALGO_PERSIST_DYNAMIC) {
    check(cudnnBuildRNNDynamic(ctx.cudnn, rnn, static_cast<int>(d.batch)), "cudnnBuildRNNDynamic");
  }
}

RnnWeightLayout rnn_weight_layout(const CudaContext& ctx, const RnnDescriptor& rnn, const CudnnCell& cell,
                                  const LstmDims& d, bool has_bias, size_t elem, int layer) {
  RnnWeightLayout layout;
  layout.elem = elem;
  check(cudnnGetRNNWeightSpaceSize(ctx.cudnn, rnn, &layout.bytes), "cudnnGetRNNWeightSpaceSize");
  // cuDNN answers with addresses inside a weight space, so a scratch one is needed to ask.
  const DeviceMemory scratch = device_alloc(ctx, layout.bytes, "cudaMalloc (RNN weight layout)");
  const auto* base = static_cast<const uint8_t*>(scratch.get());
  auto element_at = [&](const void* addr) {
    return static_cast<size_t>(static_cast<const uint8_t*>(addr) - base) / elem;
  };
  const size_t h = static_cast<size_t>(d.hidden), in = static_cast<size_t>(d.input);
  TensorDescriptor m_desc, b_desc;
  const size_t g = static_cast<size_t>(cell.gates);
  for (int dir = 0; dir < d.num_dir; ++dir) {
    for (int lin = 0; lin < 2 * cell.gates; ++lin) {  // gates x (W, R)
      void* m_addr = nullptr;
      void* b_addr = nullptr;
      const int pseudo_layer = layer * static_cast<int>(d.num_dir) + dir;
      check(cudnnGetRNNWeightParams(ctx.cudnn, rnn, pseudo_layer, layout.bytes, scratch.get(), lin, m_desc, &m_addr,
                                    b_desc, &b_addr),
            "cudnnGetRNNWeightParams");
      const bool recurrent = lin >= cell.gates;
      const size_t gate = cell.onnx_gate[static_cast<size_t>(lin % cell.gates)];
      const size_t cols = recurrent ? h : in;
      if (!m_addr || element_count(m_desc) != h * cols || (has_bias && (!b_addr || element_count(b_desc) != h))) {
        throw DeviceError(std::string("cuDNN's ") + cell.name + " weight layout is not the one expected (linear " +
                          "layer " + std::to_string(lin) + " of direction " + std::to_string(dir) + ", layer " +
                          std::to_string(layer) + ")");
      }
      const size_t dir_block = static_cast<size_t>(dir) * g * h * cols;  // W or R of this direction
      layout.copies.push_back({recurrent ? kRnnR : kRnnW, dir_block + gate * h * cols, element_at(m_addr), h * cols});
      if (has_bias) {
        // B [D, 2GH]: this direction's Wb (GH) then its Rb (GH).
        const size_t src = static_cast<size_t>(dir) * 2 * g * h + (recurrent ? g * h : 0) + gate * h;
        layout.copies.push_back({kRnnB, src, element_at(b_addr), h});
      }
    }
  }
  return layout;
}

RnnWeightLayout lstm_stack_weight_layout(const CudaContext& ctx, const RnnDescriptor& rnn, const LstmDims& d,
                                         const std::vector<bool>& has_bias) {
  RnnWeightLayout all;
  for (size_t l = 0; l < has_bias.size(); ++l) {
    LstmDims layer = d;
    if (l > 0) layer.input = d.hidden;  // layer l reads layer l-1's h
    const RnnWeightLayout one =
        rnn_weight_layout(ctx, rnn, kLstmCell, layer, has_bias[l], sizeof(float), static_cast<int>(l));
    all.bytes = one.bytes;  // the whole stack's space
    for (WeightCopy c : one.copies) {
      // c.input is an LSTM input position (kLstmW, kLstmR, kLstmB): the stack's own for layer l.
      c.input = lstm_stack_input(l, static_cast<LstmInput>(c.input));
      all.copies.push_back(c);
    }
  }
  return all;
}

void pack_weights_from_host(const CudaContext& ctx, const RnnWeightLayout& layout, const void* const host[],
                            void* space) {
  std::vector<uint8_t> packed(layout.bytes, 0);  // zero bits: 0.0 in either float type
  const size_t e = layout.elem;
  for (const WeightCopy& c : layout.copies) {
    std::memcpy(packed.data() + c.dst * e, static_cast<const uint8_t*>(host[c.input]) + c.src * e, c.count * e);
  }
  check(cudaMemcpyAsync(space, packed.data(), layout.bytes, cudaMemcpyHostToDevice, ctx.stream),
        "cudaMemcpyAsync (RNN weights)");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");  // `packed` dies here
}

WeightCopier::WeightCopier(const CudaContext& ctx, const RnnWeightLayout& layout)
    : ctx_(&ctx), bytes_(layout.bytes), elem_(layout.elem) {
  // Inputs in order, kCopySlots to a launch; each launch's entries contiguous in the table.
  std::map<size_t, std::vector<const WeightCopy*>> by_input;
  size_t covered = 0;
  for (const WeightCopy& c : layout.copies) {
    by_input[c.input].push_back(&c);
    covered += c.count * elem_;
  }
  tiles_space_ = covered == bytes_;
  std::vector<BlockCopy> table;
  for (const auto& kv : by_input) {
    if (launches_.empty() || launches_.back().inputs.size() == static_cast<size_t>(kCopySlots)) {
      launches_.push_back(Launch{{}, table.size(), 0, 0});
    }
    Launch& l = launches_.back();
    const int32_t slot = static_cast<int32_t>(l.inputs.size());
    l.inputs.push_back(kv.first);
    for (const WeightCopy* c : kv.second) {
      table.push_back(BlockCopy{slot, static_cast<int64_t>(c->src), static_cast<int64_t>(c->dst),
                                static_cast<int64_t>(c->count)});
      l.longest = std::max(l.longest, static_cast<int64_t>(c->count));
      ++l.blocks;
    }
  }
  table_ = device_alloc(*ctx_, table.size() * sizeof(BlockCopy), "cudaMalloc (RNN weight copies)");
  check(cudaMemcpyAsync(table_.get(), table.data(), table.size() * sizeof(BlockCopy), cudaMemcpyHostToDevice,
                        ctx.stream),
        "cudaMemcpyAsync (RNN weight copies)");
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize");  // `table` dies here
}

void WeightCopier::launch(const Launch& l, const void* const* tensors, void* space, bool into_space) const {
  CopySlots slots;
  for (size_t s = 0; s < l.inputs.size(); ++s) slots.ptr[s] = const_cast<void*>(tensors[l.inputs[s]]);
  launch_block_copies(static_cast<const BlockCopy*>(table_.get()) + l.first, static_cast<int64_t>(l.blocks),
                      l.longest, slots, space, elem_, into_space, ctx_->stream);
}

void WeightCopier::pack(const void* const* tensors, void* space) const {
  if (!tiles_space_) check(cudaMemsetAsync(space, 0, bytes_, ctx_->stream), "cudaMemsetAsync (RNN weights)");
  for (const Launch& l : launches_) launch(l, tensors, space, true);
}

void WeightCopier::unpack(const void* space, float* const* tensors) const {
  for (const Launch& l : launches_) {
    launch(l, reinterpret_cast<const void* const*>(tensors), const_cast<void*>(space), false);
  }
}

}  // namespace dnnx::cuda
