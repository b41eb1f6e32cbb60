// Pow and PRelu on the CPU (ops/elementwise/pow_prelu.cc), forward and gradient side by side. The forwards
// run the one broadcasting loop (broadcast_binary.h); the gradients expand the sides to the
// output and sum each side's terms back over its broadcast dims (broadcast_sum.h). With a, b
// the inputs broadcast to the output:
//   Pow    z = a^b        dA = sum(dZ * b * a^(b-1))     dB = sum(dZ * z * ln a)
//          (as PyTorch: the dA term is 0 where b == 0, the dB term 0 where a == 0 and b >= 0)
//   PRelu  y = x < 0 ? s x : x     dX = dY * (x < 0 ? s : 1)     dS = sum(dY * (x < 0 ? x : 0))
// An integer exponent (any width, signed or not) is converted to float into the workspace first
// (numel(B) floats). An int32/int64 base is onnxruntime's: both sides as double, std::pow, the
// result cast back to the base's type (Note [integer pow]).
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/elementwise/broadcast_binary.h"
#include "backends/cpu/elementwise/broadcast_sum.h"
#include "backends/cpu/runtime/element_type.h"
#include "backends/cpu/runtime/fast_math.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

struct PowFn {
  float operator()(float a, float b) const { return std::pow(a, b); }
};

struct PReluFn {
  float operator()(float x, float slope) const { return x < 0.0f ? slope * x : x; }
};

// B's elements as float: B itself, or its integer values converted into `to`.
const float* exponent_floats(DType dtype, const void* b, int64_t n, float* to) {
  if (dtype == DType::Float32) return static_cast<const float*>(b);
  with_number(dtype, [&](auto zero) {
    using E = decltype(zero);
    for (int64_t i = 0; i < n; ++i) to[i] = static_cast<float>(static_cast<const E*>(b)[i]);
  });
  return to;
}

// Note [integer pow]: onnxruntime computes an int32/int64 base's Pow as
// static_cast<T>(std::pow(x, y)), x and y promoted to double: exact while the result fits
// double's 53 bits (3^39 comes out as the double nearest it, as there), truncated toward zero
// for a float exponent (8^0.5 -> 2) or a negative one (2^-1 -> 0). Where that double is NaN or
// past T's range (0^-1, (-8)^0.5, 3^40 in int32) C++ leaves the cast undefined and x86 gives
// T's lowest value; that value is written here, by rule, not by accident.
template <class T>
struct IntegerPowFn {
  T operator()(double a, double b) const {
    const double z = std::pow(a, b);
    // T's range as doubles: [-2^(bits-1), 2^(bits-1)), both ends exact powers of two.
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    if (!(z >= lo && z < -lo)) return std::numeric_limits<T>::min();
    return static_cast<T>(z);
  }
};

// Pow with an int32/int64 base: A and B as doubles in the workspace ([numel(A)] then
// [numel(B)]), then the broadcasting loop into T.
template <class T>
class IntegerBasePowKernel final : public Kernel {
 public:
  IntegerBasePowKernel(std::unique_ptr<Kernel> pow, DType exponent, int64_t size_a, int64_t size_b)
      : pow_(std::move(pow)), exponent_(exponent), size_a_(size_a), size_b_(size_b) {}
  void run(const KernelArgs& args) const override {
    double* a = static_cast<double*>(args.workspace);
    double* b = a + size_a_;
    const T* x = args.in<T>(0);
    for (int64_t i = 0; i < size_a_; ++i) a[i] = static_cast<double>(x[i]);
    with_number(exponent_, [&](auto zero) {
      using E = decltype(zero);
      const E* y = args.in<E>(1);
      for (int64_t i = 0; i < size_b_; ++i) b[i] = static_cast<double>(y[i]);
    });
    const void* in[2] = {a, b};
    pow_->run(KernelArgs{in, args.outputs, nullptr});
  }

 private:
  std::unique_ptr<Kernel> pow_;
  DType exponent_;
  int64_t size_a_, size_b_;
};

template <class T>
KernelChoice plan_integer_base_pow(const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice = broadcast_binary_choice<double, T>(inputs, outputs, IntegerPowFn<T>{});
  const int64_t size_a = numel(inputs[0].info.shape), size_b = numel(inputs[1].info.shape);
  choice.kernel = std::make_unique<IntegerBasePowKernel<T>>(std::move(choice.kernel), inputs[1].info.dtype, size_a,
                                                            size_b);
  choice.workspace_bytes = static_cast<size_t>(size_a + size_b) * sizeof(double);
  choice.algorithm += std::string(" (") + dtype_name(inputs[0].info.dtype) + " base, in double)";
  return choice;
}

// Pow with an integer exponent: the float loop over a converted copy of B.
class IntExponentPowKernel final : public Kernel {
 public:
  IntExponentPowKernel(std::unique_ptr<Kernel> pow, DType dtype, int64_t n)
      : pow_(std::move(pow)), dtype_(dtype), n_(n) {}
  void run(const KernelArgs& args) const override {
    float* converted = static_cast<float*>(args.workspace);
    const void* in[2] = {args.inputs[0], exponent_floats(dtype_, args.inputs[1], n_, converted)};
    pow_->run(KernelArgs{in, args.outputs, nullptr});
  }

 private:
  std::unique_ptr<Kernel> pow_;
  DType dtype_;
  int64_t n_;
};

// Note [pow by a scalar]: a float base raised to one float exponent (GELU's tanh form: x^3, the
// RMS and variance forms: x^2) reads the exponent at run time, as onnxruntime does, and takes
// exact special cases: 2 -> x * x (correctly rounded, as powf), 3 -> x * x * x in double rounded
// to float (powf's value but for a rare double rounding; float products would be 2 roundings
// off), 1 -> x; any other value runs std::pow per element (0.5 stays
// there: pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf, unlike sqrt). libm's powf is ~8 ns an
// element here; the products vectorize.
DNNX_VECTOR_CLONES void square_rows(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * x[i];
}

DNNX_VECTOR_CLONES void cube_rows(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = static_cast<float>(v * v * v);
  }
}

class PowByScalarKernel final : public Kernel {
 public:
  explicit PowByScalarKernel(int64_t n) : n_(n) {}
  void run(const KernelArgs& args) const override {
    const float* x = args.in(0);
    const float e = *args.in(1);
    float* y = args.out(0);
    if (e == 2.0f) {
      square_rows(x, y, n_);
    } else if (e == 3.0f) {
      cube_rows(x, y, n_);
    } else if (e == 1.0f) {
      if (y != x) std::memcpy(y, x, static_cast<size_t>(n_) * sizeof(float));
    } else {
      for (int64_t i = 0; i < n_; ++i) y[i] = std::pow(x[i], e);
    }
  }

 private:
  int64_t n_;
};

KernelChoice plan_pow(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const DType base = inputs[0].info.dtype;
  if (base == DType::Int32) return plan_integer_base_pow<int32_t>(inputs, outputs);
  if (base == DType::Int64) return plan_integer_base_pow<int64_t>(inputs, outputs);
  if (base == DType::Float32 && inputs[1].info.dtype == DType::Float32 && numel(inputs[1].info.shape) == 1 &&
      inputs[0].info.shape == outputs[0].shape) {
    KernelChoice choice;
    choice.kernel = std::make_unique<PowByScalarKernel>(numel(outputs[0].shape));
    choice.algorithm = "by scalar";
    return choice;
  }
  KernelChoice choice = broadcast_binary_choice<float, float>(inputs, outputs, PowFn{});
  const DType exponent = inputs[1].info.dtype;
  if (exponent != DType::Float32) {
    const int64_t n = numel(inputs[1].info.shape);
    choice.kernel = std::make_unique<IntExponentPowKernel>(std::move(choice.kernel), exponent, n);
    choice.workspace_bytes = static_cast<size_t>(n) * sizeof(float);
    choice.algorithm += " (integer exponent as float)";
  }
  return choice;
}

KernelChoice plan_prelu(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  return broadcast_binary_choice<float, float>(inputs, outputs, PReluFn{});
}

// Workspace [n] a, [n] b, [n] terms, then B as float when it is an integer.
class PowGradKernel final : public GradKernel {
 public:
  PowGradKernel(const Shape& a, const Shape& b, const Shape& out, DType exponent)
      : walk_a_(broadcast_walk(a, out)), walk_b_(broadcast_walk(b, out)), size_a_(numel(a)), size_b_(numel(b)),
        n_(numel(out)), exponent_(exponent) {}

  void run(const GradArgs& args) const override {
    float* da = args.d_inputs[0];
    float* db = args.d_inputs[1];
    if (!da && !db) return;
    float* a = static_cast<float*>(args.workspace);
    float* b = a + n_;
    float* terms = b + n_;
    broadcast_expand(walk_a_, args.in(0), a);
    broadcast_expand(walk_b_, exponent_floats(exponent_, args.inputs[1], size_b_, terms + n_), b);
    const float* dz = args.d_outputs[0];
    const float* z = args.out(0);
    if (da) {
      for (int64_t i = 0; i < n_; ++i) terms[i] = b[i] == 0.0f ? 0.0f : dz[i] * b[i] * std::pow(a[i], b[i] - 1.0f);
      broadcast_reduce(walk_a_, terms, da, size_a_);
    }
    if (db) {  // an integer exponent never asks for one (the trainer passes gradients to floats only)
      for (int64_t i = 0; i < n_; ++i) {
        terms[i] = a[i] == 0.0f && b[i] >= 0.0f ? 0.0f : dz[i] * z[i] * std::log(a[i]);
      }
      broadcast_reduce(walk_b_, terms, db, size_b_);
    }
  }

 private:
  BroadcastWalk walk_a_, walk_b_;
  int64_t size_a_, size_b_, n_;
  DType exponent_;
};

GradChoice plan_pow_grad(const GradRequest& r) {
  const Shape& out = r.outputs[0].shape;
  const DType exponent = r.inputs[1].info.dtype;
  GradChoice choice;
  choice.algorithm = "broadcast reduce";
  choice.workspace_bytes = static_cast<size_t>(3 * numel(out) + numel(r.inputs[1].info.shape)) * sizeof(float);
  choice.kernel = std::make_unique<PowGradKernel>(r.inputs[0].info.shape, r.inputs[1].info.shape, out, exponent);
  return choice;
}

// Workspace [n]: the slope expanded to X's shape, then dS's terms.
class PReluGradKernel final : public GradKernel {
 public:
  PReluGradKernel(const Shape& x, const Shape& slope)
      : walk_(broadcast_walk(slope, x)), n_(numel(x)), slopes_(numel(slope)) {}

  void run(const GradArgs& args) const override {
    const float *x = args.in(0), *dy = args.d_outputs[0];
    float* tmp = static_cast<float*>(args.workspace);
    if (float* dx = args.d_inputs[0]) {
      broadcast_expand(walk_, args.in(1), tmp);
      for (int64_t i = 0; i < n_; ++i) dx[i] = x[i] < 0.0f ? dy[i] * tmp[i] : dy[i];
    }
    if (float* ds = args.d_inputs[1]) {
      for (int64_t i = 0; i < n_; ++i) tmp[i] = x[i] < 0.0f ? dy[i] * x[i] : 0.0f;
      broadcast_reduce(walk_, tmp, ds, slopes_);
    }
  }

 private:
  BroadcastWalk walk_;
  int64_t n_, slopes_;
};

GradChoice plan_prelu_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  GradChoice choice;
  choice.algorithm = "broadcast reduce";
  choice.workspace_bytes = static_cast<size_t>(numel(x)) * sizeof(float);
  choice.kernel = std::make_unique<PReluGradKernel>(x, r.inputs[1].info.shape);
  return choice;
}

}  // namespace

void register_cpu_pow_prelu_kernels(KernelRegistry& r) {
  // Float32 and every integer type (the exponent's; the base is float, int32 or int64: the op's
  // inference refuses others). Float64 and the halves are widened to float32 (Note [cpu dtypes]).
  std::vector<DType> pow_types = {DType::Float32};
  for (DType t : number_types()) {
    if (is_integer(t)) pow_types.push_back(t);
  }
  r.add("Pow", plan_pow).with_dtypes(pow_types).with_gradient(plan_pow_grad);
  r.add("PRelu", plan_prelu).with_gradient(plan_prelu_grad);
}

}  // namespace dnnx
