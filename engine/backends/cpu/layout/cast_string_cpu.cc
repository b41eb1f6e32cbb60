#include "backends/cpu/layout/cast_string_cpu.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "backends/cpu/layout/cast_codecs.h"
#include "ir/errors.h"

namespace dnnx {

namespace {

template <class P>
std::string number_text(P value) {
  if constexpr (std::is_same_v<P, bool>) {
    return value ? "1" : "0";
  } else if constexpr (std::is_floating_point_v<P>) {
    const double v = static_cast<double>(value);
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.8g", v);
    return buffer;
  } else {
    return std::to_string(static_cast<std::conditional_t<std::is_signed_v<P>, long long, unsigned long long>>(value));
  }
}

template <class From>
class ToStringKernel final : public Kernel {
 public:
  ToStringKernel(int64_t n, DType from) : n_(n), from_(from) {}
  void run(const KernelArgs& args) const override {
    const auto* x = args.in<typename From::Stored>(0);
    auto* y = args.out<StringPtr>(0);
    if (!args.strings) throw Error("Cast to string: the run has no string store");
    for (int64_t i = 0; i < n_; ++i) y[i] = args.strings->add(number_text(From::read(x[i], from_)));
  }

 private:
  int64_t n_;
  DType from_;
};

template <class To>
class FromStringKernel final : public Kernel {
 public:
  FromStringKernel(std::string where, int64_t n, DType to) : where_(std::move(where)), n_(n), to_(to) {}
  void run(const KernelArgs& args) const override {
    const auto* x = args.in<StringPtr>(0);
    auto* y = args.out<typename To::Stored>(0);
    using P = typename To::Proxy;
    for (int64_t i = 0; i < n_; ++i) {
      const std::string& s = string_of(x[i]);
      const char* begin = s.c_str();
      char* end = nullptr;
      errno = 0;
      if constexpr (std::is_floating_point_v<P>) {
        const double v = std::strtod(begin, &end);
        check(s, end != begin);
        y[i] = To::write(v, to_, true);
      } else if constexpr (std::is_signed_v<P>) {
        const long long v = std::strtoll(begin, &end, 10);
        check(s, end != begin && errno != ERANGE);
        y[i] = To::write(static_cast<int64_t>(v), to_, true);
      } else {
        const unsigned long long v = std::strtoull(begin, &end, 10);
        check(s, end != begin && errno != ERANGE);
        y[i] = To::write(static_cast<uint64_t>(v), to_, true);
      }
    }
  }

 private:
  void check(const std::string& s, bool ok) const {
    if (!ok) throw InputError(where_ + ": cannot read the string '" + s + "' as " + dtype_name(to_));
  }
  std::string where_;
  int64_t n_;
  DType to_;
};

}  // namespace

std::unique_ptr<Kernel> make_string_cast(const std::string& where, DType from, DType to, int64_t n) {
  if (to == DType::String) {
    return with_codec(from, [&](auto f) -> std::unique_ptr<Kernel> {
      return std::make_unique<ToStringKernel<decltype(f)>>(n, from);
    });
  }
  return with_codec(to, [&](auto t) -> std::unique_ptr<Kernel> {
    return std::make_unique<FromStringKernel<decltype(t)>>(where, n, to);
  });
}

}  // namespace dnnx
