// The gradients of RMSNormalization, LpNormalization and MeanVarianceNormalization on the CPU
// (float32; the forward: moment_norms_cpu.cc), from X, scale and dY, per row or cell of L
// elements:
//   RMSNormalization  r = 1 / sqrt(mean(x^2) + epsilon), g_j = dy_j scale_j:
//                     dx_j = r g_j - (r^3 / L) x_j sum_k(g_k x_k);  dscale[idx(j)] += dy_j x_j r
//   LpNormalization   n = ||x||_p, y = x / n, s = sum(dy y):
//                     dx_j = (dy_j - s y_j) / n (p 2), (dy_j - s sign(x_j)) / n (p 1); 0 where n = 0
//   MeanVarianceNormalization  c = x - mean, sd = sqrt(mean(c^2)):
//                     dx_j = (dy_j - mean(dy)) / sd - c_j sum(dy c) / (sd^3 L)
#include <cmath>
#include <algorithm>
#include <cstring>

#include "backends/cpu/reduce/reduce_cells.h"
#include "ops/normalization/moment_norms.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

class RmsNormGradKernel final : public GradKernel {
 public:
  RmsNormGradKernel(RmsNormGeometry g, int64_t scale_numel) : g_(std::move(g)), scale_numel_(scale_numel) {}
  void run(const GradArgs& args) const override {
    const float *x = args.in(0), *scale = args.in(1), *dy = args.d_outputs[0];
    float *dx = args.d_inputs[0], *dscale = args.d_inputs[1];
    if (dscale) std::memset(dscale, 0, static_cast<size_t>(scale_numel_) * sizeof(float));
    const int64_t len = g_.row_len;
    for (int64_t r = 0; r < g_.rows; ++r) {
      const float *row = x + r * len, *drow = dy + r * len;
      float sum_sq = 0.0f, dot = 0.0f;
      for (int64_t j = 0; j < len; ++j) {
        sum_sq += row[j] * row[j];
        dot += drow[j] * scale[g_.scale_index[j]] * row[j];
      }
      const float inv = 1.0f / std::sqrt(sum_sq / static_cast<float>(len) + g_.epsilon);
      if (dx) {
        const float k = inv * inv * inv * dot / static_cast<float>(len);
        for (int64_t j = 0; j < len; ++j) dx[r * len + j] = inv * drow[j] * scale[g_.scale_index[j]] - k * row[j];
      }
      if (dscale) {
        for (int64_t j = 0; j < len; ++j) dscale[g_.scale_index[j]] += drow[j] * row[j] * inv;
      }
    }
  }

 private:
  RmsNormGeometry g_;
  int64_t scale_numel_;
};

class LpNormGradKernel final : public GradKernel {
 public:
  explicit LpNormGradKernel(LpNormGeometry g) : g_(g) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float *x = args.in(0), *y = args.out(0), *dy = args.d_outputs[0];
    for (int64_t o = 0; o < g_.outer; ++o) {
      for (int64_t i = 0; i < g_.inner; ++i) {
        const int64_t base = o * g_.n * g_.inner + i;
        float norm = 0.0f, s = 0.0f;
        for (int64_t k = 0; k < g_.n; ++k) {
          const int64_t at = base + k * g_.inner;
          norm += g_.p == 1 ? std::fabs(x[at]) : x[at] * x[at];
          s += dy[at] * y[at];
        }
        if (g_.p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < g_.n; ++k) {
          const int64_t at = base + k * g_.inner;
          const float dir = g_.p == 2 ? y[at] : x[at] > 0.0f ? 1.0f : x[at] < 0.0f ? -1.0f : 0.0f;
          dx[at] = norm == 0.0f ? 0.0f : (dy[at] - s * dir) / norm;
        }
      }
    }
  }

 private:
  LpNormGeometry g_;
};

class MvnGradKernel final : public GradKernel {
 public:
  explicit MvnGradKernel(ReduceCells c) : c_(std::move(c)) {}
  void run(const GradArgs& args) const override {
    float* dx = args.d_inputs[0];
    if (!dx) return;
    const float *x = args.in(0), *dy = args.d_outputs[0];
    const float count = static_cast<float>(c_.red.size());
    for (int64_t base : c_.base) {
      float sum = 0.0f, dy_sum = 0.0f;
      for (int64_t r : c_.red) {
        sum += x[base + r];
        dy_sum += dy[base + r];
      }
      const float mean = sum / count;
      float sum_sq = 0.0f, dot = 0.0f;  // sum(c^2), sum(dy c)
      for (int64_t r : c_.red) {
        const float c = x[base + r] - mean;
        sum_sq += c * c;
        dot += dy[base + r] * c;
      }
      const float sd = std::sqrt(sum_sq / count);
      const float k = dot / (sd * sd * sd * count);
      for (int64_t r : c_.red) {
        dx[base + r] = (dy[base + r] - dy_sum / count) / sd - (x[base + r] - mean) * k;
      }
    }
  }

 private:
  ReduceCells c_;
};

GradChoice plan_rms_norm_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "rows";
  choice.kernel = std::make_unique<RmsNormGradKernel>(
      rms_norm_geometry(r.node, r.inputs[0].info.shape, r.inputs[1].info.shape), numel(r.inputs[1].info.shape));
  return choice;
}

GradChoice plan_lp_norm_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "rows";
  choice.kernel = std::make_unique<LpNormGradKernel>(lp_norm_geometry(r.node, r.inputs[0].info.shape));
  return choice;
}

GradChoice plan_mvn_grad(const GradRequest& r) {
  const Shape& x = r.inputs[0].info.shape;
  GradChoice choice;
  choice.algorithm = "cells";
  choice.kernel = std::make_unique<MvnGradKernel>(reduce_cells(x, mvn_reduced_axes(r.node, x)));
  return choice;
}

}  // namespace

void register_cpu_moment_norms_grad_kernels(KernelRegistry& r) {
  r.at("RMSNormalization").with_gradient(plan_rms_norm_grad);
  r.at("LpNormalization").with_gradient(plan_lp_norm_grad);
  r.at("MeanVarianceNormalization").with_gradient(plan_mvn_grad);
}

}  // namespace dnnx
