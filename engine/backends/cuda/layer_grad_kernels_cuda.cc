#include "backends/cuda/cuda_grad_kernels.h"

namespace dnnx::cuda {

// Filled in by the layer-gradient work (Conv, MaxPool, LSTM, binary, Transpose, Concat, BN).
void register_cuda_layer_grad_kernels(GradRegistry& /*r*/) {}

}  // namespace dnnx::cuda
