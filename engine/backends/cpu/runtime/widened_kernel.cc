#include "backends/cpu/runtime/widened_kernel.h"

#include <algorithm>
#include <memory>

namespace dnnx {

namespace {

void to_float(const void* src, DType from, int64_t n, float* dst) {
  if (from == DType::Float64) {
    const double* x = static_cast<const double*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(x[i]);
  } else {
    const uint16_t* x = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = storage_to_float(x[i], from);
  }
}

void from_float(const float* src, DType to, int64_t n, void* dst) {
  if (to == DType::Float64) {
    double* y = static_cast<double*>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = src[i];
  } else {
    uint16_t* y = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) y[i] = float_to_storage(src[i], to);
  }
}

// One input or output: its declared type (Float32 when it passes unconverted) and element count.
struct Edge {
  DType declared = DType::Float32;
  int64_t n = 0;
};

class WidenedKernel final : public Kernel {
 public:
  WidenedKernel(std::unique_ptr<Kernel> inner, std::vector<Edge> inputs, std::vector<Edge> outputs,
                std::vector<std::shared_ptr<ConstTensor>> constants)
      : inner_(std::move(inner)), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
        constants_(std::move(constants)) {}

  void run(const KernelArgs& args) const override {
    std::vector<std::vector<float>> buffers;  // per run: one kernel may run on several threads
    std::vector<const void*> in(inputs_.size());
    std::vector<void*> out(outputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i) {
      in[i] = args.inputs[i];
      if (inputs_[i].declared == DType::Float32 || !in[i]) continue;
      buffers.emplace_back(static_cast<size_t>(inputs_[i].n));
      to_float(in[i], inputs_[i].declared, inputs_[i].n, buffers.back().data());
      in[i] = buffers.back().data();
    }
    std::vector<size_t> converted;
    for (size_t o = 0; o < outputs_.size(); ++o) {
      out[o] = args.outputs[o];
      if (outputs_[o].declared == DType::Float32 || !out[o]) continue;
      buffers.emplace_back(static_cast<size_t>(outputs_[o].n));
      out[o] = buffers.back().data();
      converted.push_back(o);
    }
    inner_->run(KernelArgs{in.data(), out.data(), args.workspace, args.strings});
    for (size_t o : converted) {
      from_float(static_cast<const float*>(out[o]), outputs_[o].declared, outputs_[o].n, args.outputs[o]);
    }
  }

 private:
  std::unique_ptr<Kernel> inner_;
  std::vector<Edge> inputs_, outputs_;
  std::vector<std::shared_ptr<ConstTensor>> constants_;  // the float32 copies the inner kernel was planned with
};

bool holds(const std::vector<DType>& types, DType t) { return std::find(types.begin(), types.end(), t) != types.end(); }

}  // namespace

bool widenable(DType t) { return t == DType::Float64 || is_half(t); }

KernelChoice plan_widened(const KernelFactory& factory, const std::vector<DType>& native, const Node& node,
                          const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  std::vector<ValueInfo> in = inputs;
  std::vector<TensorInfo> out = outputs;
  std::vector<Edge> in_edges(inputs.size()), out_edges(outputs.size());
  std::vector<std::shared_ptr<ConstTensor>> constants;
  std::string declared;
  auto note = [&declared](DType t) {
    const std::string name = dtype_name(t);
    if (declared.find(name) == std::string::npos) declared += (declared.empty() ? "" : "/") + name;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    const DType t = in[i].info.dtype;
    if (!in[i].present || !widenable(t) || holds(native, t)) continue;
    in_edges[i] = {t, numel(in[i].info.shape)};
    in[i].info.dtype = DType::Float32;
    note(t);
    if (in[i].constant) {  // what the inner kernel may read while it plans
      auto copy = std::make_shared<ConstTensor>();
      copy->info = in[i].info;
      copy->data.resize(copy->info.bytes());
      to_float(in[i].constant->data.data(), t, in_edges[i].n, copy->as_mut<float>());
      in[i].constant = copy.get();
      constants.push_back(std::move(copy));
    }
  }
  // Note [views with more outputs] (runtime/planner.cc): a view's output 0 is its input's bytes,
  // which its kernel leaves alone: nothing to convert back there.
  const OpDef* def = op_registry().find(node);
  const size_t first = def && def->aliases_input0 ? 1 : 0;
  for (size_t o = 0; o < out.size(); ++o) {
    const DType t = out[o].dtype;
    if (!widenable(t) || holds(native, t)) continue;
    out[o].dtype = DType::Float32;
    if (o < first) continue;
    out_edges[o] = {t, numel(out[o].shape)};
    note(t);
  }
  KernelChoice choice = factory(node, in, out);
  if (choice.kernel) {
    choice.kernel = std::make_unique<WidenedKernel>(std::move(choice.kernel), std::move(in_edges),
                                                    std::move(out_edges), std::move(constants));
  }
  choice.algorithm += (choice.algorithm.empty() ? "" : ", ") + declared + " computed in float32";
  return choice;
}

}  // namespace dnnx
