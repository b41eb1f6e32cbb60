// HannWindow, HammingWindow and BlackmanWindow on the CPU (formulas: ops/signal/window.cc): the
// window depends only on its size, known when planning, so the plan computes it (in double,
// rounded once) and the kernel copies it out.
#include <algorithm>
#include <cmath>

#include "ops/signal/signal.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr double kPi = 3.14159265358979323846;

template <class T>
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(std::vector<T> values) : values_(std::move(values)) {}
  void run(const KernelArgs& args) const override { std::copy(values_.begin(), values_.end(), args.out<T>(0)); }

 private:
  std::vector<T> values_;
};

double window_value(const std::string& op, double n, double period) {
  if (op == "HannWindow") {
    const double s = std::sin(kPi * n / period);
    return s * s;
  }
  if (op == "HammingWindow") return 25.0 / 46.0 - (21.0 / 46.0) * std::cos(2 * kPi * n / period);
  return 0.42 - 0.5 * std::cos(2 * kPi * n / period) + 0.08 * std::cos(4 * kPi * n / period);
}

KernelChoice plan_window(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  const int64_t size = scalar_int_input(node, inputs, 0, "size");
  const double period = static_cast<double>(node.attr_int("periodic", 1) != 0 ? size : size - 1);
  std::vector<float> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) w[n] = static_cast<float>(window_value(node.op_type, static_cast<double>(n), period));
  KernelChoice choice;
  choice.algorithm = "computed at plan time";
  choice.kernel = std::make_unique<ConstantKernel<float>>(std::move(w));
  return choice;
}

}  // namespace

void register_cpu_window_kernels(KernelRegistry& r) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) r.add(op, plan_window);
}

}  // namespace dnnx
