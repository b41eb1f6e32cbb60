#include "runtime/passes/passes.h"

#include "runtime/passes/rewrite.h"

namespace dnnx {

namespace {

struct PassEntry {
  const char* name;
  bool PassOptions::*enabled;
  int (*run)(Graph&, const PassOptions&);
};

// A conv's bias Add folds first (Conv -> Add -> BN -> Relu then folds whole); BatchNormalization
// folds before Conv+Relu fuses, so Conv -> BN -> Relu ends as one Conv+Relu
// (and only a BN no conv took fuses with its Relu);
// MatMul+Add becomes a Gemm before Gemm+Relu looks for Gemms; Conv+Relu forms before a MaxPool
// joins it.
const PassEntry kPasses[] = {
    {"fold_conv_add", &PassOptions::fold_conv_add, fold_conv_add},
    {"fold_batchnorm", &PassOptions::fold_batchnorm, fold_batchnorm},
    {"fuse_batchnorm_relu", &PassOptions::fuse_batchnorm_relu, fuse_batchnorm_relu},
    {"fuse_matmul_add", &PassOptions::fuse_matmul_add, fuse_matmul_add},
    {"fuse_conv_relu", &PassOptions::fuse_conv_relu, fuse_conv_relu},
    {"fuse_conv_activation", &PassOptions::fuse_conv_activation, fuse_conv_activation},
    {"fuse_gemm_relu", &PassOptions::fuse_gemm_relu, fuse_gemm_relu},
    {"fuse_gemm_softmax", &PassOptions::fuse_gemm_softmax, fuse_gemm_softmax},
    {"fuse_conv_add_relu", &PassOptions::fuse_conv_add_relu, fuse_conv_add_relu},
    {"fuse_conv_pool", &PassOptions::fuse_conv_pool, fuse_conv_pool},
    {"fuse_lstm_stack", &PassOptions::fuse_lstm_stack, fuse_lstm_stack},
    // --- transformer passes (issue #38) ---
    {"fuse_gelu", &PassOptions::fuse_gelu, fuse_gelu},
};

}  // namespace

PassOptions PassOptions::checked_by(const Backend& backend) const {
  PassOptions out = *this;
  out.can_run = [&backend](const Node& node) { return backend.unsupported_reason(node).empty(); };
  return out;
}

// channels_last and fold_entry_cast are switches like the others, but the engine runs them (when
// the backend asks for channels-last or half storage).
constexpr const char* kChannelsLast = "channels_last";
constexpr const char* kFoldEntryCast = "fold_entry_cast";
constexpr const char* kFuseQdqInt8 = "fuse_qdq_int8";  // the engine runs it first, before constant folding

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out{kFuseQdqInt8};
    for (const PassEntry& p : kPasses) out.push_back(p.name);
    out.push_back(kChannelsLast);
    out.push_back(kFoldEntryCast);
    return out;
  }();
  return names;
}

void set_pass(PassOptions& options, const std::string& name, bool enabled) {
  for (const PassEntry& p : kPasses) {
    if (name == p.name) {
      options.*p.enabled = enabled;
      return;
    }
  }
  if (name == kFuseQdqInt8) {
    options.fuse_qdq_int8 = enabled;
    return;
  }
  if (name == kChannelsLast) {
    options.channels_last = enabled;
    return;
  }
  if (name == kFoldEntryCast) {
    options.fold_entry_cast = enabled;
    return;
  }
  std::string known;
  for (const std::string& p : pass_names()) known += (known.empty() ? "" : ", ") + p;
  throw InputError("unknown pass '" + name + "' (passes: " + known + ")");
}

void run_passes(Graph& graph, const PassOptions& options) {
  int rewrites = 0;
  for (const PassEntry& p : kPasses) {
    if (options.*p.enabled) rewrites += p.run(graph, options);
  }
  if (rewrites > 0) drop_unused_constants(graph);
}

}  // namespace dnnx
