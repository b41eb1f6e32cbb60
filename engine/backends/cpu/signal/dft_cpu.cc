// DFT and STFT on the CPU (ops/signal/dft.h): the direct sum over a twiddle table
// e^(-2 pi i m / L), m = (k n) mod L, accumulated in double, so that the exact zeros of a
// transform (the imaginary part of a real signal's DC bin, ...) come out as zeros.
// O(L^2) per sequence: the node cases and spectrogram front ends use short frames.
#include <cmath>
#include <vector>

#include "ops/signal/dft.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr double kPi = 3.14159265358979323846;

struct Twiddles {
  std::vector<double> cos, sin;  // of 2 pi m / L
  explicit Twiddles(int64_t length) : cos(length), sin(length) {
    for (int64_t m = 0; m < length; ++m) {
      const double angle = 2 * kPi * static_cast<double>(m) / static_cast<double>(length);
      cos[m] = std::cos(angle);
      sin[m] = std::sin(angle);
    }
  }
};

// out[k] = sum_n in[n] e^(sign 2 pi i k n / L) for k < bins, n < in.size() / 2 (re, im pairs).
void direct_dft(const std::vector<double>& in, int64_t length, int64_t bins, double sign, const Twiddles& t,
                std::vector<double>& out) {
  const int64_t n_count = static_cast<int64_t>(in.size() / 2);
  for (int64_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (int64_t n = 0; n < n_count; ++n) {
      const int64_t m = (k * n) % length;
      const double c = t.cos[m], s = sign * t.sin[m];
      re += in[2 * n] * c - in[2 * n + 1] * s;
      im += in[2 * n] * s + in[2 * n + 1] * c;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
}

template <class T>
class DftKernel final : public Kernel {
 public:
  explicit DftKernel(DftGeometry g) : g_(g), twiddles_(g.length) {}

  // x [outer, in_len, inner, 1|2] -> y [outer, out_len, inner, 2|1].
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const int64_t cin = g_.in_complex ? 2 : 1, cout = g_.real_out() ? 1 : 2;
    const int64_t used = std::min(g_.in_len, g_.real_out() ? g_.length / 2 + 1 : g_.length);
    std::vector<double> seq, spectrum;
    for (int64_t o = 0; o < g_.outer; ++o) {
      for (int64_t i = 0; i < g_.inner; ++i) {
        seq.assign(2 * used, 0.0);
        for (int64_t n = 0; n < used; ++n) {
          const T* v = x + ((o * g_.in_len + n) * g_.inner + i) * cin;
          seq[2 * n] = v[0];
          seq[2 * n + 1] = cin == 2 ? v[1] : 0.0;
        }
        if (g_.real_out()) hermitian_extend(seq);
        spectrum.assign(2 * g_.out_len, 0.0);
        direct_dft(seq, g_.length, g_.out_len, g_.inverse ? 1.0 : -1.0, twiddles_, spectrum);
        const double scale = g_.inverse ? 1.0 / static_cast<double>(g_.length) : 1.0;
        for (int64_t k = 0; k < g_.out_len; ++k) {
          T* v = y + ((o * g_.out_len + k) * g_.inner + i) * cout;
          v[0] = static_cast<T>(spectrum[2 * k] * scale);
          if (cout == 2) v[1] = static_cast<T>(spectrum[2 * k + 1] * scale);
        }
      }
    }
  }

 private:
  // A one-sided spectrum (bins 0..L/2) -> the full one, X[L - k] = conj(X[k]), as numpy's
  // irfft reads it: the DC bin's imaginary part (and an even L's Nyquist bin's) dropped.
  void hermitian_extend(std::vector<double>& seq) const {
    const int64_t l = g_.length, given = static_cast<int64_t>(seq.size() / 2);
    std::vector<double> full(2 * l, 0.0);
    for (int64_t k = 0; k < given && k <= l / 2; ++k) {
      full[2 * k] = seq[2 * k];
      full[2 * k + 1] = seq[2 * k + 1];
      if (k > 0 && l - k != k) {
        full[2 * (l - k)] = seq[2 * k];
        full[2 * (l - k) + 1] = -seq[2 * k + 1];
      }
    }
    full[1] = 0;
    if (l % 2 == 0) full[l + 1] = 0;
    seq.swap(full);
  }

  DftGeometry g_;
  Twiddles twiddles_;
};

template <class T>
class StftKernel final : public Kernel {
 public:
  explicit StftKernel(StftGeometry g) : g_(g), twiddles_(g.length) {}

  // signal [B, T, 1|2], window [L] -> y [B, frames, bins, 2].
  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    const T* window = g_.has_window ? args.in<T>(2) : nullptr;
    T* y = args.out<T>(0);
    const int64_t cin = g_.in_complex ? 2 : 1;
    std::vector<double> frame(2 * g_.length), spectrum(2 * g_.bins);
    for (int64_t b = 0; b < g_.batch; ++b) {
      for (int64_t f = 0; f < g_.frames; ++f) {
        for (int64_t n = 0; n < g_.length; ++n) {
          const T* v = x + (b * g_.signal_len + f * g_.step + n) * cin;
          const double w = window ? static_cast<double>(window[n]) : 1.0;
          frame[2 * n] = v[0] * w;
          frame[2 * n + 1] = cin == 2 ? v[1] * w : 0.0;
        }
        direct_dft(frame, g_.length, g_.bins, -1.0, twiddles_, spectrum);
        T* out = y + (b * g_.frames + f) * g_.bins * 2;
        for (int64_t k = 0; k < 2 * g_.bins; ++k) out[k] = static_cast<T>(spectrum[k]);
      }
    }
  }

 private:
  StftGeometry g_;
  Twiddles twiddles_;
};

KernelChoice plan_dft(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "direct sum";
  choice.kernel = std::make_unique<DftKernel<float>>(dft_geometry(node, inputs));
  return choice;
}

KernelChoice plan_stft(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "direct sum";
  choice.kernel = std::make_unique<StftKernel<float>>(stft_geometry(node, inputs));
  return choice;
}

}  // namespace

void register_cpu_dft_kernels(KernelRegistry& r) {
  r.add("DFT", plan_dft);
  r.add("STFT", plan_stft);
}

}  // namespace dnnx
