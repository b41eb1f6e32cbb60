// LabelEncoder on the CPU (ops/ml/label_encoder.cc has its semantics): a hash map from each key to
// its value's index, built at plan time; a string output points at a copy of its value in the
// run's store (Note [string tensors]), made once per distinct value per run.
#include <cmath>
#include <unordered_map>

#include "ir/errors.h"
#include "ops/ml/label_encoder.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

// The keys of one type, as the kernel looks them up (K: std::string, int64_t or double).
template <class K>
std::vector<K> keys_of(const LabelTable& t);
template <>
std::vector<std::string> keys_of(const LabelTable& t) { return t.key_strings; }
template <>
std::vector<int64_t> keys_of(const LabelTable& t) { return t.key_ints; }
template <>
std::vector<double> keys_of(const LabelTable& t) { return t.key_numbers; }

// X's element as a key: float32 widens to double exactly, so a float key matches as it would in float.
inline const std::string& as_key(StringPtr p) { return string_of(p); }
inline int64_t as_key(int64_t v) { return v; }
inline double as_key(float v) { return v; }
inline double as_key(double v) { return v; }

template <class X, class K>
class LabelEncoderKernel final : public Kernel {
 public:
  LabelEncoderKernel(LabelTable table, int64_t n) : t_(std::move(table)), n_(n) {
    const std::vector<K> keys = keys_of<K>(t_);
    for (size_t i = 0; i < keys.size(); ++i) {
      if constexpr (std::is_same_v<K, double>) {
        if (std::isnan(keys[i])) {
          if (nan_index_ < 0 && t_.nan_matches_nan) nan_index_ = static_cast<int64_t>(i);
          continue;  // before opset 4 a NaN key matches nothing
        }
      }
      index_.emplace(keys[i], i);  // a repeated key keeps its first value
    }
  }

  void run(const KernelArgs& args) const override {
    const X* x = args.in<X>(0);
    switch (t_.value_type) {
      case DType::String: {
        if (!args.strings) throw Error("LabelEncoder: the run has no string store");
        std::vector<StringPtr> made(t_.value_strings.size() + 1, nullptr);  // the default last
        auto* y = args.out<StringPtr>(0);
        for (int64_t i = 0; i < n_; ++i) {
          const int64_t k = find(x[i]);
          const size_t slot = k < 0 ? t_.value_strings.size() : static_cast<size_t>(k);
          if (!made[slot]) made[slot] = args.strings->add(k < 0 ? t_.default_string : t_.value_strings[slot]);
          y[i] = made[slot];
        }
        break;
      }
      case DType::Int64: {
        auto* y = args.out<int64_t>(0);
        for (int64_t i = 0; i < n_; ++i) {
          const int64_t k = find(x[i]);
          y[i] = k < 0 ? t_.default_int : t_.value_ints[static_cast<size_t>(k)];
        }
        break;
      }
      case DType::Int16: {
        auto* y = args.out<int16_t>(0);
        for (int64_t i = 0; i < n_; ++i) {
          const int64_t k = find(x[i]);
          y[i] = static_cast<int16_t>(k < 0 ? t_.default_int : t_.value_ints[static_cast<size_t>(k)]);
        }
        break;
      }
      case DType::Float32: write_numbers(x, args.out<float>(0)); break;
      default: write_numbers(x, args.out<double>(0));
    }
  }

 private:
  int64_t find(X v) const {
    if constexpr (std::is_floating_point_v<X>) {
      if (std::isnan(v)) return nan_index_;
    }
    auto it = index_.find(as_key(v));
    return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  template <class Y>
  void write_numbers(const X* x, Y* y) const {
    for (int64_t i = 0; i < n_; ++i) {
      const int64_t k = find(x[i]);
      y[i] = static_cast<Y>(k < 0 ? t_.default_number : t_.value_numbers[static_cast<size_t>(k)]);
    }
  }

  LabelTable t_;
  int64_t n_;
  std::unordered_map<K, size_t> index_;
  int64_t nan_index_ = -1;
};

KernelChoice plan_label_encoder(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  const DType x = inputs[0].info.dtype;
  LabelTable table = label_table(node, x);
  const int64_t n = numel(outputs[0].shape);
  KernelChoice choice;
  choice.algorithm = "hash map";
  switch (x) {
    case DType::String: choice.kernel = std::make_unique<LabelEncoderKernel<StringPtr, std::string>>(std::move(table), n); break;
    case DType::Int64: choice.kernel = std::make_unique<LabelEncoderKernel<int64_t, int64_t>>(std::move(table), n); break;
    case DType::Float32: choice.kernel = std::make_unique<LabelEncoderKernel<float, double>>(std::move(table), n); break;
    case DType::Float64: choice.kernel = std::make_unique<LabelEncoderKernel<double, double>>(std::move(table), n); break;
    default: node_fail<UnsupportedModelError>(node, std::string("X is ") + dtype_name(x) + ", expected string, int64, float32 or float64");
  }
  return choice;
}

}  // namespace

void register_cpu_label_encoder_kernels(KernelRegistry& r) {
  r.add("ai.onnx.ml::LabelEncoder", plan_label_encoder).with_dtypes({DType::Float32, DType::Float64, DType::String, DType::Int16});
}

}  // namespace dnnx
