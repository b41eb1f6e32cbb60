// Inference-time rewrites of the Graph, run once at load: after validation, before planning.
// Each pass is small, named and can be switched off (from Python: dnnx.load(..., passes={...})
// or optimize=False). A pass that creates a fused op (Conv+Relu, Gemm+Relu, LSTMStack) first asks
// whether the backend can run it, so a backend without that kernel keeps the nodes apart.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/passes/half_range.h"
#include "ir/graph.h"

namespace dnnx {

struct PassOptions {
  // Note [qdq int8] (fuse_qdq_int8.cc): DequantizeLinear -> Conv/Gemm/MatMul (+bias, Relu,
  // residual Add) -> QuantizeLinear => one Int8Conv/Int8Gemm/Int8MatMul that accumulates in int32
  // and requantizes (where the backend has them: the CPU); run by the engine before constant folding.
  bool fuse_qdq_int8 = true;
  bool fold_conv_add = true;    // Conv -> Add(constant per-channel bias): the Add folded into B
  bool fold_batchnorm = true;   // Conv -> BatchNormalization: the BN folded into W and B
  // BatchNormalization (inference) -> Relu => BatchNormalization+Relu (where the backend has it)
  bool fuse_batchnorm_relu = true;
  bool fuse_matmul_add = true;  // MatMul(2-D A, constant 2-D B) -> Add(constant bias) => Gemm
  bool fuse_conv_relu = true;   // Conv -> Relu => Conv+Relu (Relu in the conv kernel's epilogue)
  // Conv -> Clip (constant bounds) / HardSwish / SiLU (Sigmoid and Mul) => Conv+Clip,
  // Conv+HardSwish, Conv+Swish (where the backend has them: the CPU)
  bool fuse_conv_activation = true;
  bool fuse_gemm_relu = true;   // Gemm -> Relu => Gemm+Relu
  bool fuse_gemm_softmax = true;  // Gemm -> Softmax (last axis) => Gemm+Softmax (where the backend has it)
  bool fuse_conv_add_relu = true;  // Conv -> Add(z) -> Relu => Conv+Add+Relu (where the backend has it)
  bool fuse_conv_pool = true;   // Conv(+Relu) -> MaxPool => Conv(+Relu)+MaxPool (where the backend has it)
  bool fuse_lstm_stack = true;  // LSTM -> drop the direction axis -> LSTM ... => LSTMStack (one call)
  // --- transformer passes (issue #38, fuse_gelu.cc) ---
  // GELU spelled out in elementwise nodes (erf form: Div/Mul, Erf, Add, Mul, Mul; tanh form: Pow,
  // Mul, Add, Mul, Tanh, Add, Mul, Mul) => one Gelu node (where the backend has it)
  bool fuse_gelu = true;
  // --- end transformer passes ---
  // 4-D window ops channels-last between the model's edges, where the backend asks for it
  // (Backend::channels_last: CUDA at tf32 and fp16); run by the engine after the passes above.
  bool channels_last = true;
  // Cast(float32 -> half) -> Transpose+SpaceToDepth => one layout kernel that converts (Note
  // [entry cast]); run by the engine after half storage.
  bool fold_entry_cast = true;
  // precision="fp16": the values a calibration batch measured (dnnx.load(..., calibration=x)), for
  // the range check that keeps nodes float32 (half_range.h); empty: estimated from the weights.
  HalfCalibration half_calibration;
  // Note [measured precision] (python/dnnx/_precision_choice.py): node name -> why it keeps
  // float32 and ONNX's layout under a half precision: its segment of half layers measured slower
  // than the same layers in fp32. The engine keeps such nodes out of the channels_last and
  // half_storage passes, the reason in the plan.
  std::map<std::string, std::string> keep_fp32;
  // Whether the backend can run a node a pass wants to create; unset: any node.
  std::function<bool(const Node&)> can_run;

  // A copy whose can_run asks `backend` (which must outlive the run_passes call).
  PassOptions checked_by(const Backend& backend) const;
};

// The pass names in the order they run: "fold_batchnorm", "fuse_matmul_add", ...
const std::vector<std::string>& pass_names();
// Switches one pass by name; InputError naming the known passes for an unknown name.
void set_pass(PassOptions& options, const std::string& name, bool enabled);

// Runs every enabled pass, in pass_names() order.
void run_passes(Graph& graph, const PassOptions& options);

// The passes one by one; each returns how many rewrites it made.
int fold_conv_add(Graph& graph, const PassOptions& options);    // fold_conv_add.cc
int fold_batchnorm(Graph& graph, const PassOptions& options);   // fold_batchnorm.cc
int fuse_batchnorm_relu(Graph& graph, const PassOptions& options);  // fuse_batchnorm_relu.cc
int fuse_matmul_add(Graph& graph, const PassOptions& options);  // fuse_matmul_add.cc
int fuse_conv_relu(Graph& graph, const PassOptions& options);   // fuse_conv_relu.cc
int fuse_conv_activation(Graph& graph, const PassOptions& options);  // fuse_conv_activation.cc
int fuse_gemm_relu(Graph& graph, const PassOptions& options);   // fuse_gemm_relu.cc
int fuse_gemm_softmax(Graph& graph, const PassOptions& options);  // fuse_gemm_softmax.cc
int fuse_conv_add_relu(Graph& graph, const PassOptions& options);  // fuse_conv_add_relu.cc
int fuse_conv_pool(Graph& graph, const PassOptions& options);   // fuse_conv_pool.cc
int fuse_lstm_stack(Graph& graph, const PassOptions& options);  // fuse_lstm_stack.cc
// --- transformer passes (issue #38) ---
int fuse_gelu(Graph& graph, const PassOptions& options);        // fuse_gelu.cc
// --- end transformer passes ---
// Run by the engine before constant folding (the weights' DequantizeLinears must still be there).
int fuse_qdq_int8(Graph& graph, const PassOptions& options);    // fuse_qdq_int8.cc

// Channels last (channels_last.cc, Note [channels last]), run by the engine after the passes
// above when the backend asks for it (Backend::channels_last) and before half storage.
// `can_run` says whether the backend has a kernel for a node. `min_channels` > 0: a region of
// channels-last ops is kept only where one of its convs has at least that many input channels
// (per group) and filters (Note [narrow regions]). Returns the number of window ops that run
// channels-last (0: the graph is unchanged). `channel_multiple` > 1: convs read input channels
// padded to a multiple of it (Note [padded channels]). `forms`: the rewrites past the window ops
// and same-shape elementwise ops (Note [channels-last forms]).
int channels_last(Graph& graph, const std::function<bool(const Node&)>& can_run, int64_t min_channels = 0,
                  int64_t channel_multiple = 1, const ChannelsLastForms& forms = {});

// Half storage (precision="fp16" or "bf16", half_storage.cc), run by the engine after the
// passes above when the backend asks for it (Backend::half_storage). `half` is the storage type
// (Float16 or BFloat16); `half_reason` says why a node has no kernel of that type ("" when it
// has one). Every node with one reads and writes `half` in place of float32; its float32
// initializers become `half` copies (round to nearest even, once, here). Float32 graph inputs
// are converted at entry and half graph outputs back at exit by Cast nodes (which the plan shows
// as layers); a node without a half kernel keeps float32, between Casts. Integer values (shapes,
// indices, sequence_lens) are never touched. A node named in `keep_fp32` (half_range_reasons:
// its values leave fp16's range) stays float32 the same way, the reason in its
// Node::fp32_reason for the plan. Returns the number of nodes that run in half.
int half_storage(Graph& graph, DType half, const std::function<std::string(const Node&)>& half_reason,
                 const std::map<std::string, std::string>& keep_fp32 = {});

// After half storage (fold_entry_cast.cc, Note [entry cast]): a Cast of a float32 value to half
// read by a Transpose+SpaceToDepth alone becomes part of it. Returns the number folded.
int fold_entry_cast(Graph& graph, const PassOptions& options);

}  // namespace dnnx
