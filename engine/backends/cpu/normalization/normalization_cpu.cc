// LayerNormalization, InstanceNormalization and GroupNormalization on the CPU, forward and
// gradient side by side, over the one form of ops/normalization/normalization.h: X [rows, row_len], each row
// normalized by its own statistics (accumulated in double), then scaled and shifted by the
// parameters of index p(r, j). With xhat the normalized row, inv_std = 1 / sqrt(var + eps),
// g = dY * scale[p] and means over the row:
//   dX     = inv_std * (g - mean(g) - xhat * mean(g * xhat))
//   dscale = sum(dY * xhat), dbias = sum(dY), over the elements of each parameter
// LayerNormalization's Mean and InvStdDev outputs are written when asked for; no gradient flows
// back through them (docs/finetune.md).
#include <algorithm>
#include <cmath>

#include "backends/cpu/elementwise/fixed_chunks.h"
#include "backends/cpu/runtime/fast_math.h"
#include "ops/normalization/normalization.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

constexpr size_t kScale = 1, kBias = 2, kMeanOut = 1, kInvStdOut = 2;

struct RowStats {
  float mean, inv_std;
};

// Note [norm lanes]: a row's sum and squared deviations are accumulated in double in kLanes
// partial sums (lane l takes the elements j = l mod kLanes of the full blocks, the tail lane 0 in
// order), combined pairwise: the loops are vector code (a serial double sum ran one element per
// add latency: ViT-Tiny's 25 LayerNormalizations over [197, 192] took 3.5 ms). The order depends
// on the row length alone, never on the thread count.
constexpr int64_t kLanes = 8;

inline double combine_lanes(double (&s)[kLanes]) {
  for (int64_t w = kLanes / 2; w > 0; w /= 2) {
    for (int64_t l = 0; l < w; ++l) s[l] += s[l + w];
  }
  return s[0];
}

DNNX_VECTOR_CLONES RowStats row_stats(const float* x, int64_t n, float epsilon) {
  double s[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) s[l] += x[j + l];
  }
  for (; j < n; ++j) s[0] += x[j];
  const double mean = n ? combine_lanes(s) / static_cast<double>(n) : 0.0;
  double q[kLanes] = {};
  for (j = 0; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) q[l] += (x[j + l] - mean) * (x[j + l] - mean);
  }
  for (; j < n; ++j) q[0] += (x[j] - mean) * (x[j] - mean);
  const double var = n ? combine_lanes(q) / static_cast<double>(n) : 0.0;
  return {static_cast<float>(mean), static_cast<float>(1.0 / std::sqrt(var + epsilon))};
}

// y = (x - mean) * inv_std * scale + bias over n elements with their own parameters (chunk_len 1:
// LayerNormalization) or one pair for all (scale and bias pointing at one value each: step 0).
DNNX_VECTOR_CLONES void normalize_span(const float* x, float* y, int64_t n, RowStats st, const float* scale,
                                       const float* bias, bool step) {
  if (step && bias) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - st.mean) * st.inv_std * scale[j] + bias[j];
  } else if (step) {
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - st.mean) * st.inv_std * scale[j] + 0.0f;
  } else {
    const float sc = *scale, b = bias ? *bias : 0.0f;
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - st.mean) * st.inv_std * sc + b;
  }
}

// The parameter index of element j of row r is first + j / chunk_len.
int64_t first_param(const NormGeometry& g, int64_t r) { return (r % g.row_groups) * g.chunks; }

// Which optional slots the node has (the call's pointer arrays are as long as its inputs and
// outputs, and an omitted one is null).
struct NormSlots {
  bool bias = false, mean = false, inv_std = false;
};

NormSlots norm_slots(const Node& node) {
  return {node.inputs.size() > kBias && !node.inputs[kBias].empty(), node.has_output(kMeanOut),
          node.has_output(kInvStdOut)};
}

class NormKernel final : public Kernel {
 public:
  NormKernel(NormGeometry g, NormSlots slots) : g_(g), slots_(slots) {}
  void run(const KernelArgs& args) const override {
    const float *x = args.in(0), *scale = args.in(kScale), *bias = slots_.bias ? args.in(kBias) : nullptr;
    float* y = args.out(0);
    float* mean_out = slots_.mean ? args.out(kMeanOut) : nullptr;
    float* inv_std_out = slots_.inv_std ? args.out(kInvStdOut) : nullptr;
    // rows across the pool (Note [fixed chunks]: each row is computed alone either way)
    for_fixed_chunks(g_.rows, rows_per_chunk(g_.row_len), [&](int64_t first, int64_t last) {
      run_rows(first, last, x, scale, bias, y, mean_out, inv_std_out);
    });
  }

 private:
  void run_rows(int64_t first, int64_t last, const float* x, const float* scale, const float* bias, float* y,
                float* mean_out, float* inv_std_out) const {
    for (int64_t r = first; r < last; ++r) {
      const float* xr = x + r * g_.row_len;
      float* yr = y + r * g_.row_len;
      const RowStats s = row_stats(xr, g_.row_len, g_.epsilon);
      if (mean_out) mean_out[r] = s.mean;
      if (inv_std_out) inv_std_out[r] = s.inv_std;
      const int64_t p0 = first_param(g_, r);
      if (g_.chunk_len == 1) {
        normalize_span(xr, yr, g_.row_len, s, scale + p0, bias ? bias + p0 : nullptr, true);
        continue;
      }
      for (int64_t j = 0; j < g_.row_len; j += g_.chunk_len) {  // one parameter per chunk
        const int64_t p = p0 + j / g_.chunk_len, len = std::min(g_.chunk_len, g_.row_len - j);
        normalize_span(xr + j, yr + j, len, s, scale + p, bias ? bias + p : nullptr, false);
      }
    }
  }

  NormGeometry g_;
  NormSlots slots_;
};

class NormGradKernel final : public GradKernel {
 public:
  NormGradKernel(NormGeometry g, NormSlots slots) : g_(g), slots_(slots) {}
  void run(const GradArgs& args) const override {
    const float *x = args.in(0), *scale = args.in(kScale), *dy = args.d_outputs[0];
    float *dx = args.d_inputs[0], *dscale = args.d_inputs[kScale];
    float* dbias = slots_.bias ? args.d_inputs[kBias] : nullptr;
    if (dscale) std::fill(dscale, dscale + g_.params, 0.0f);
    if (dbias) std::fill(dbias, dbias + g_.params, 0.0f);
    for (int64_t r = 0; r < g_.rows; ++r) {
      const float *xr = x + r * g_.row_len, *dyr = dy + r * g_.row_len;
      const RowStats s = row_stats(xr, g_.row_len, g_.epsilon);
      const int64_t p0 = first_param(g_, r);
      double sum_g = 0.0, sum_gx = 0.0;
      for (int64_t j = 0; j < g_.row_len; ++j) {
        const int64_t p = p0 + j / g_.chunk_len;
        const float xhat = (xr[j] - s.mean) * s.inv_std;
        const float gj = dyr[j] * scale[p];
        sum_g += gj;
        sum_gx += gj * xhat;
        if (dscale) dscale[p] += dyr[j] * xhat;
        if (dbias) dbias[p] += dyr[j];
      }
      if (!dx) continue;
      const float mean_g = static_cast<float>(sum_g / g_.row_len), mean_gx = static_cast<float>(sum_gx / g_.row_len);
      float* dxr = dx + r * g_.row_len;
      for (int64_t j = 0; j < g_.row_len; ++j) {
        const float xhat = (xr[j] - s.mean) * s.inv_std;
        dxr[j] = s.inv_std * (dyr[j] * scale[p0 + j / g_.chunk_len] - mean_g - xhat * mean_gx);
      }
    }
  }

 private:
  NormGeometry g_;
  NormSlots slots_;
};

KernelChoice plan_norm(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "per row";
  choice.kernel = std::make_unique<NormKernel>(norm_geometry(node, inputs[0].info.shape), norm_slots(node));
  return choice;
}

GradChoice plan_norm_grad(const GradRequest& r) {
  GradChoice choice;
  choice.algorithm = "per row";
  choice.kernel = std::make_unique<NormGradKernel>(norm_geometry(r.node, r.inputs[0].info.shape), norm_slots(r.node));
  return choice;
}

}  // namespace

void register_cpu_normalization_kernels(KernelRegistry& r) {
  for (const char* op : {"LayerNormalization", "InstanceNormalization", "GroupNormalization"}) {
    r.add(op, plan_norm).with_gradient(plan_norm_grad);
  }
}

}  // namespace dnnx
