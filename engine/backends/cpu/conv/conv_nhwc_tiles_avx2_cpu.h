// The channels-last tiles in AVX2 and FMA (Note [avx2 tiles] in conv_nhwc_tiles_avx2_cpu.cc), for
// conv_nhwc_tiles_cpu.cc to run where the CPU has them and no AVX-512.
#pragma once
#include <cstdint>

#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"

namespace dnnx {

// Whether this CPU has AVX2 and FMA.
bool nhwc_cpu_has_avx2();

// The dense tile's loop over strips of `pixels` (1 to 6) pixels and one panel of 16 filters: the
// contract of nhwc_dense_tile's tile functions (conv_nhwc_tiles_cpu.cc), its `table` argument the
// pixels of a strip's pointer table.
using AvxDenseFn = void (*)(const float* const* rows, int64_t table, int64_t taps, int64_t c0, int64_t cn,
                            const float* w, float* y, int64_t ldc, int64_t m, int64_t n, bool accumulate, bool last,
                            const NhwcEpilogue& e);
AvxDenseFn nhwc_dense_avx2_fn(int pixels);

// nhwc_depthwise_strip's contract (conv_nhwc_tiles_cpu.h) in AVX2.
void nhwc_depthwise_avx2(const DepthwiseStrip& s, int64_t c0, int64_t n, const float* w, float* y, int64_t m,
                         const NhwcEpilogue& e);

}  // namespace dnnx
