// StringConcat and RegexFullMatch on the CPU (ops/text/strings.cc has their
// semantics). New strings go to the run's store (KernelArgs::strings, Note [string tensors]).

#include "ir/errors.h"
#include "ops/text/strings.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

StringStore& store_of(const KernelArgs& args, const char* op) {
  if (!args.strings) throw Error(std::string(op) + ": the run has no string store");
  return *args.strings;
}

// Element strides of `in` as broadcast to `out` (0 along a broadcast dim), aligned right.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t d = in.size() - 1 - k, o = out.size() - 1 - k;
    strides[o] = in[d] == 1 ? 0 : stride;
    stride *= in[d];
  }
  return strides;
}

// Z = X + Y over broadcast shapes: an index counter over the output's dims.
class StringConcatKernel final : public Kernel {
 public:
  StringConcatKernel(const Shape& x, const Shape& y, Shape out)
      : out_(std::move(out)), sx_(broadcast_strides(x, out_)), sy_(broadcast_strides(y, out_)) {}
  void run(const KernelArgs& args) const override {
    StringStore& store = store_of(args, "StringConcat");
    const auto* x = args.in<StringPtr>(0);
    const auto* y = args.in<StringPtr>(1);
    auto* z = args.out<StringPtr>(0);
    const int64_t n = numel(out_);
    std::vector<int64_t> index(out_.size(), 0);
    int64_t ix = 0, iy = 0;
    for (int64_t i = 0; i < n; ++i) {
      z[i] = store.add(string_of(x[ix]) + string_of(y[iy]));
      for (size_t d = out_.size(); d-- > 0;) {  // advance the counter, carrying
        ix += sx_[d];
        iy += sy_[d];
        if (++index[d] < out_[d]) break;
        ix -= sx_[d] * out_[d];
        iy -= sy_[d] * out_[d];
        index[d] = 0;
      }
    }
  }

 private:
  Shape out_;
  std::vector<int64_t> sx_, sy_;
};

class RegexFullMatchKernel final : public Kernel {
 public:
  RegexFullMatchKernel(FullMatchPattern pattern, int64_t n) : pattern_(std::move(pattern)), n_(n) {}
  void run(const KernelArgs& args) const override {
    const auto* x = args.in<StringPtr>(0);
    auto* y = args.out<bool>(0);
    for (int64_t i = 0; i < n_; ++i) y[i] = pattern_.matches(string_of(x[i]));
  }

 private:
  FullMatchPattern pattern_;
  int64_t n_;
};

KernelChoice plan_string_concat(const Node&, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "concatenate";
  choice.kernel = std::make_unique<StringConcatKernel>(inputs[0].info.shape, inputs[1].info.shape, outputs[0].shape);
  return choice;
}

KernelChoice plan_regex_full_match(const Node& node, const std::vector<ValueInfo>&, const std::vector<TensorInfo>& outputs) {
  KernelChoice choice;
  choice.algorithm = "full match (Pike VM)";
  choice.kernel = std::make_unique<RegexFullMatchKernel>(compile_full_match_pattern(node), numel(outputs[0].shape));
  return choice;
}

}  // namespace

void register_cpu_strings_kernels(KernelRegistry& r) {
  r.add("StringConcat", plan_string_concat).with_dtypes({DType::String});
  r.add("RegexFullMatch", plan_regex_full_match).with_dtypes({DType::String});
}

}  // namespace dnnx
