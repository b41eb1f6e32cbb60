// What this CPU's instruction set offers, asked once per process: the vectorized kernels pick
// their loops by it (AVX-512, else AVX2 with FMA, else portable). False off x86-64 GCC/Clang.
#pragma once

namespace dnnx {

#if defined(__x86_64__) && defined(__GNUC__)
inline bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
inline bool cpu_has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#else
inline bool cpu_has_avx2_fma() { return false; }
inline bool cpu_has_avx512f() { return false; }
#endif

// Where a kernel's hand-written 8-lane loop runs: AVX2 and FMA, but no AVX-512 (whose 16-lane
// clones or loops run instead).
inline bool cpu_avx2_without_avx512() { return !cpu_has_avx512f() && cpu_has_avx2_fma(); }

}  // namespace dnnx
