// Einsum on the CPU, forward and gradient side by side. The equation is parsed and planned once
// (Note [einsum program] in einsum_program.h): a contraction runs as layout copies and a batched
// GEMM, the rest as strided sums.
// Gradient (float32): for input i, G = einsum(dY, the other inputs -> input i's labels that dY or
// the others carry), itself a program; then dInput_i = 0 and G added at every position of input
// i (a label only input i had is broadcast, a repeated label's diagonal is written, a broadcast
// size-1 dim accumulates).
#include <algorithm>

#include "backends/cpu/dense/einsum_program.h"
#include "backends/cpu/runtime/element_type.h"
#include "ops/dense/einsum.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct ParsedEinsum {
  EinsumEquation eq;
  std::vector<EinsumOperand> operands;
};

ParsedEinsum parse(const Node& node, const std::vector<ValueInfo>& inputs) {
  std::vector<Shape> shapes;
  for (const ValueInfo& v : inputs) shapes.push_back(v.info.shape);
  ParsedEinsum p;
  p.eq = parse_einsum(node, shapes);
  for (size_t i = 0; i < shapes.size(); ++i) p.operands.push_back({p.eq.inputs[i], shapes[i]});
  return p;
}

template <class T>
class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(EinsumProgram p, size_t inputs) : p_(std::move(p)), inputs_(inputs) {}
  void run(const KernelArgs& args) const override {
    std::vector<const T*> in(inputs_);
    for (size_t i = 0; i < inputs_; ++i) in[i] = args.in<T>(i);
    run_einsum_program<T>(p_, in, args.out<T>(0), static_cast<T*>(args.workspace));
  }

 private:
  EinsumProgram p_;
  size_t inputs_;
};

KernelChoice plan_einsum(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const ParsedEinsum e = parse(node, inputs);
  EinsumProgram program = plan_einsum_program(e.operands, e.eq.output, e.eq.sizes);
  KernelChoice choice;
  choice.algorithm = program.describe;
  choice.kernel = with_dtype(inputs[0].info.dtype, [&](auto t) -> std::unique_ptr<Kernel> {
    using T = decltype(t);
    choice.workspace_bytes = static_cast<size_t>(program.workspace_elements) * sizeof(T);
    return std::make_unique<EinsumKernel<T>>(std::move(program), inputs.size());
  });
  return choice;
}

// --- gradient ---------------------------------------------------------------------------------

// One input's gradient: the program for G and where G goes in dInput.
struct InputGrad {
  size_t input = 0;
  EinsumProgram program;
  std::vector<size_t> operands;   // the program's operands: kDy or an input index
  int64_t g_elements = 0;
  // Over input i's distinct labels (full sizes): G's stride and dInput's stride per label.
  std::vector<int64_t> sizes, g_strides, d_strides;
  int64_t d_elements = 0;
};

constexpr size_t kDy = static_cast<size_t>(-1);

InputGrad plan_input_grad(const ParsedEinsum& e, const Shape& out_shape, size_t i) {
  InputGrad g;
  g.input = i;
  std::vector<EinsumOperand> ops{{e.eq.output, out_shape}};
  g.operands.push_back(kDy);
  std::vector<int> carried(e.eq.output.begin(), e.eq.output.end());
  for (size_t j = 0; j < e.operands.size(); ++j) {
    if (j == i) continue;
    ops.push_back(e.operands[j]);
    g.operands.push_back(j);
    carried.insert(carried.end(), e.operands[j].labels.begin(), e.operands[j].labels.end());
  }
  const EinsumOperand& a = e.operands[i];
  std::vector<int> distinct, g_labels;
  for (int l : a.labels) {
    if (std::find(distinct.begin(), distinct.end(), l) != distinct.end()) continue;
    distinct.push_back(l);
    if (std::find(carried.begin(), carried.end(), l) != carried.end()) g_labels.push_back(l);
  }
  g.program = plan_einsum_program(ops, g_labels, e.eq.sizes);
  // G is contiguous over g_labels; dInput's strides as its view (diagonals add, broadcasts are 0).
  std::vector<int64_t> a_strides(a.shape.size(), 1);
  for (size_t d = a.shape.size(); d-- > 1;) a_strides[d - 1] = a_strides[d] * a.shape[d];
  g.d_elements = numel(a.shape);
  g.g_elements = 1;
  for (int l : g_labels) g.g_elements *= e.eq.sizes.at(l);
  for (int l : distinct) {
    g.sizes.push_back(e.eq.sizes.at(l));
    int64_t gs = 0, step = 1;
    for (size_t k = g_labels.size(); k-- > 0;) {
      if (g_labels[k] == l) gs = step;
      step *= e.eq.sizes.at(g_labels[k]);
    }
    g.g_strides.push_back(gs);
    int64_t ds = 0;
    for (size_t d = 0; d < a.labels.size(); ++d) {
      if (a.labels[d] == l && !(a.shape[d] == 1 && e.eq.sizes.at(l) != 1)) ds += a_strides[d];
    }
    g.d_strides.push_back(ds);
  }
  return g;
}

class EinsumGradKernel final : public GradKernel {
 public:
  explicit EinsumGradKernel(std::vector<InputGrad> grads) : grads_(std::move(grads)) {}
  void run(const GradArgs& args) const override {
    for (const InputGrad& g : grads_) {
      float* d = args.d_inputs[g.input];
      if (!d) continue;
      std::vector<const float*> ops;
      for (size_t o : g.operands) ops.push_back(o == kDy ? args.d_outputs[0] : args.in(o));
      float* gbuf = static_cast<float*>(args.workspace);
      run_einsum_program<float>(g.program, ops, gbuf, gbuf + g.g_elements);
      std::fill(d, d + g.d_elements, 0.0f);
      scatter(g, gbuf, d);
    }
  }

 private:
  // d[at . d_strides] += G[at . g_strides] for every index `at` over input i's distinct labels.
  static void scatter(const InputGrad& g, const float* gbuf, float* d) {
    const size_t n = g.sizes.size();
    int64_t total = 1;
    for (int64_t s : g.sizes) total *= s;
    std::vector<int64_t> at(n, 0);
    int64_t go = 0, dof = 0;
    for (int64_t t = 0; t < total; ++t) {
      d[dof] += gbuf[go];
      for (size_t k = n; k-- > 0;) {
        go += g.g_strides[k];
        dof += g.d_strides[k];
        if (++at[k] < g.sizes[k]) break;
        go -= g.g_strides[k] * g.sizes[k];
        dof -= g.d_strides[k] * g.sizes[k];
        at[k] = 0;
      }
    }
  }

  std::vector<InputGrad> grads_;
};

GradChoice plan_einsum_grad(const GradRequest& r) {
  if (r.inputs[0].info.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(r.node, "Einsum's gradient takes float32 inputs");
  }
  const ParsedEinsum e = parse(r.node, r.inputs);
  std::vector<InputGrad> grads;
  GradChoice choice;
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    if (!r.needs_grad[i]) continue;
    grads.push_back(plan_input_grad(e, r.outputs[0].shape, i));
    const InputGrad& g = grads.back();
    choice.workspace_bytes =
        std::max(choice.workspace_bytes, static_cast<size_t>(g.g_elements + g.program.workspace_elements) * sizeof(float));
    choice.algorithm += (choice.algorithm.empty() ? "" : ", ") + std::string("d") + std::to_string(i) + ": " +
                        g.program.describe + "+scatter";
  }
  choice.kernel = std::make_unique<EinsumGradKernel>(std::move(grads));
  return choice;
}

}  // namespace

void register_cpu_einsum_kernels(KernelRegistry& r) { r.add("Einsum", plan_einsum).with_gradient(plan_einsum_grad); }

}  // namespace dnnx
