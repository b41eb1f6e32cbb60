#include "ops/families.h"

namespace dnnx {

const OpRegistry& op_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_activation_ops(r);
    register_binary_ops(r);
    register_gemm_ops(r);
    register_matmul_ops(r);
    register_softmax_ops(r);
    register_view_ops(r);
    register_transpose_ops(r);
    register_concat_ops(r);
    register_conv_ops(r);
    register_pool_ops(r);
    register_lstm_ops(r);
    register_batchnorm_ops(r);
    register_avg_pool_ops(r);
    register_global_pool_ops(r);
    register_lrn_ops(r);
    register_variadic_ops(r);
    register_param_activation_ops(r);
    register_pad_ops(r);
    register_shape_ops(r);
    register_gather_ops(r);
    register_slice_ops(r);
    register_cast_ops(r);
    register_expand_ops(r);
    register_reduce_ops(r);
    register_split_ops(r);
    register_fused_ops(r);  // copies Conv's and Gemm's definitions: after them
    register_conv_add_relu_ops(r);  // reads Conv: after it
    register_conv_pool_ops(r);  // reads Conv, Conv+Relu and MaxPool: after the fused ops
    register_channels_last_ops(r);  // wraps the window ops above: last
    return r;
  }();
  return registry;
}

}  // namespace dnnx
