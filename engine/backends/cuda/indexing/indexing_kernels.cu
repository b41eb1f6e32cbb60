// The gather and scatter kernels (indexing_kernels.h): one thread per output element (gathers)
// or per update element (scatters), grid-stride loops. Values are moved as unsigned integers of
// their width; the scatters' reductions combine in the element's own type (float for the half
// types, one rounding per combination) through a compare-and-swap loop, so that updates naming
// one element combine atomically (in an order that may vary: float sums may differ from the
// CPU's in their last bits). Without a reduction, duplicate indices are undefined in ONNX (the
// CPU's last update wins; here one of them does). An index out of range: Note [device index
// range].
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

#include "backends/cuda/indexing/indexing_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/runtime/numeric_types.cuh"

namespace dnnx::cuda {

namespace {

// `raw` made non-negative for a dim of `size`; -1 when it is out of [-size, size).
template <class I>
__device__ inline int64_t index_in(I raw, int64_t size) {
  int64_t i = static_cast<int64_t>(raw);
  if (i < 0) i += size;
  return i >= 0 && i < size ? i : -1;
}

// --- the reductions ---------------------------------------------------------------------------
template <size_t Bytes>
struct Carrier;
template <>
struct Carrier<2> {
  using type = unsigned short;
};
template <>
struct Carrier<4> {
  using type = unsigned int;
};
template <>
struct Carrier<8> {
  using type = unsigned long long;
};

// ScatterReduction r of the element's value and an update, as the CPU combines them
// (max: old < u ? u : old, as std::max; min: u < old ? u : old, as std::min).
template <class T>
__device__ inline T combine(ScatterReduction r, T old_value, T update) {
  using A = typename Acc<T>::type;
  const A a = static_cast<A>(old_value), b = static_cast<A>(update);
  A v = b;
  switch (r) {
    case ScatterReduction::Add: v = a + b; break;
    case ScatterReduction::Mul: v = a * b; break;
    case ScatterReduction::Max: v = a < b ? b : a; break;
    case ScatterReduction::Min: v = b < a ? b : a; break;
    case ScatterReduction::None: break;
  }
  return T(v);
}

// *p = combine(r, *p, v), atomically: a compare-and-swap loop on the element's bits (16-bit
// atomicCAS needs sm_70; the architectures start at sm_80).
template <class T>
__device__ inline void atomic_combine(T* p, T v, ScatterReduction r) {
  using U = typename Carrier<sizeof(T)>::type;
  U* bits = reinterpret_cast<U*>(p);
  U old = *bits;
  while (true) {
    T current;
    memcpy(&current, &old, sizeof(T));
    const T next = combine(r, current, v);
    U want;
    memcpy(&want, &next, sizeof(T));
    const U seen = atomicCAS(bits, old, want);
    if (seen == old) return;
    old = seen;
  }
}

// Writes `u` into y[at] (a plain scatter, E: the carrier) or combines it (T: the element type).
template <class T>
__device__ inline void scatter_one(T* y, int64_t at, T u, ScatterReduction r) {
  if (r == ScatterReduction::None) {
    y[at] = u;
  } else if constexpr (sizeof(T) >= 2) {
    atomic_combine(y + at, u, r);
  }
}

// --- GatherND ---------------------------------------------------------------------------------
// The data element that output element i reads (and its gradient adds into): `at`, from i's index
// tuple; false when an index is out of range (Note [device index range]).
template <class I>
__device__ inline bool nd_element(const I* __restrict__ idx, int64_t i, const GatherNDDims& g, int64_t& at) {
  const int64_t e = i % g.slice, tuple = i / g.slice, b = tuple / g.tuples;
  at = b * g.batch_stride + e;
  bool inside = true;
  for (int64_t j = 0; j < g.k; ++j) {
    const int64_t c = index_in(idx[tuple * g.k + j], g.size[j]);
    inside = inside && c >= 0;
    at += c * g.stride[j];
  }
  return inside;
}

template <class E, class I>
__global__ void gather_nd(const E* __restrict__ data, const I* __restrict__ idx, E* __restrict__ y, int64_t n,
                          GatherNDDims g) {
  DNNX_GRID_LOOP(i, n) {
    int64_t at = 0;
    y[i] = nd_element(idx, i, g, at) ? data[at] : E{};
  }
}

// Tuple i's slice of data as a row of [batches * batch_stride / slice, slice] (the gradient's
// keys, train/keyed_row_sums.h), or `rows` where an index is out of range.
template <class I>
__global__ void gather_nd_keys(const I* __restrict__ idx, int* keys, int64_t count, int64_t rows, GatherNDDims g) {
  DNNX_GRID_LOOP(i, count) {
    int64_t at = 0;
    keys[i] = static_cast<int>(nd_element(idx, i * g.slice, g, at) ? at / g.slice : rows);
  }
}

// --- GatherElements, ScatterElements ----------------------------------------------------------
// data's element for indices' position i (-1: the index there is out of range).
template <class I>
__device__ inline int64_t element_at(const I* idx, int64_t i, const ElementsDims& g) {
  int64_t rest = i, at = 0;
  for (int d = g.rank - 1; d >= 0; --d) {
    const int64_t c = rest % g.index[d];
    rest /= g.index[d];
    if (d == g.axis) {
      const int64_t k = index_in(idx[i], g.axis_size);
      if (k < 0) return -1;
      at += k * g.data_stride[d];
    } else {
      at += c * g.data_stride[d];
    }
  }
  return at;
}

template <class E, class I>
__global__ void gather_elements(const E* __restrict__ data, const I* __restrict__ idx, E* __restrict__ y, int64_t n,
                                ElementsDims g) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t at = element_at(idx, i, g);
    y[i] = at >= 0 ? data[at] : E{};
  }
}

template <class T, class I>
__global__ void scatter_elements(const I* __restrict__ idx, const T* __restrict__ u, T* y, int64_t n, ElementsDims g,
                                 ScatterReduction r) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t at = element_at(idx, i, g);
    if (at >= 0) scatter_one(y, at, u[i], r);
  }
}

// --- ScatterND --------------------------------------------------------------------------------
template <class T, class I>
__global__ void scatter_nd(const I* __restrict__ idx, const T* __restrict__ u, T* y, int64_t n, ScatterNDDims g,
                           ScatterReduction r) {
  DNNX_GRID_LOOP(i, n) {
    const int64_t e = i % g.slice, t = i / g.slice;
    int64_t at = 0;
    bool inside = true;
    for (int64_t j = 0; j < g.k; ++j) {
      const int64_t c = index_in(idx[t * g.k + j], g.size[j]);
      inside = inside && c >= 0;
      at += c * g.stride[j];
    }
    if (inside) scatter_one(y, at + e, u[i], r);
  }
}

// --- dispatch ---------------------------------------------------------------------------------
// Calls fn(E{}) with E the unsigned carrier of `elem` bytes.
template <class Fn>
void with_carrier(size_t elem, const char* kernel, Fn&& fn) {
  switch (elem) {
    case 1: fn(uint8_t{}); return;
    case 2: fn(uint16_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
    default: break;
  }
  throw DeviceError(std::string(kernel) + ": element size " + std::to_string(elem) + " is not supported");
}

// Calls fn(T{}) with T the element type of a reduction.
template <class Fn>
void with_scatter_type(ScatterType type, Fn&& fn) {
  switch (type) {
    case ScatterType::Float32: fn(float{}); return;
    case ScatterType::Float16: fn(__half{}); return;
    case ScatterType::BFloat16: fn(__nv_bfloat16{}); return;
    case ScatterType::Int32: fn(int32_t{}); return;
    case ScatterType::Int64: fn(int64_t{}); return;
  }
}

// Calls fn(I{}) with I the index type.
template <class Fn>
void with_index(bool idx_int64, Fn&& fn) {
  if (idx_int64) {
    fn(int64_t{});
  } else {
    fn(int32_t{});
  }
}

}  // namespace

void launch_gather_nd(const void* data, const void* idx, bool idx_int64, void* y, size_t elem, const GatherNDDims& g,
                      cudaStream_t stream) {
  const int64_t n = g.batches * g.tuples * g.slice;
  if (n == 0) return;
  with_carrier(elem, "GatherND kernel", [&](auto e) {
    using E = decltype(e);
    with_index(idx_int64, [&](auto i) {
      using I = decltype(i);
      gather_nd<E, I><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const E*>(data), static_cast<const I*>(idx),
                                                          static_cast<E*>(y), n, g);
    });
  });
  check_launch("GatherND kernel");
}

void launch_gather_nd_keys(const void* idx, bool idx_int64, int* keys, const GatherNDDims& g, cudaStream_t stream) {
  const int64_t count = g.batches * g.tuples;
  if (count == 0) return;
  const int64_t rows = g.batches * g.batch_stride / g.slice;
  with_index(idx_int64, [&](auto i) {
    using I = decltype(i);
    gather_nd_keys<I><<<grid_for(count), kBlock, 0, stream>>>(static_cast<const I*>(idx), keys, count, rows, g);
  });
  check_launch("GatherND gradient keys");
}

void launch_gather_elements(const void* data, const void* idx, bool idx_int64, void* y, size_t elem,
                            const ElementsDims& g, cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < g.rank; ++d) n *= g.index[d];
  if (n == 0) return;
  with_carrier(elem, "GatherElements kernel", [&](auto e) {
    using E = decltype(e);
    with_index(idx_int64, [&](auto i) {
      using I = decltype(i);
      gather_elements<E, I><<<grid_for(n), kBlock, 0, stream>>>(
          static_cast<const E*>(data), static_cast<const I*>(idx), static_cast<E*>(y), n, g);
    });
  });
  check_launch("GatherElements kernel");
}

void launch_scatter_elements(const void* idx, bool idx_int64, const void* updates, void* y, size_t elem,
                             ScatterType type, ScatterReduction reduction, const ElementsDims& g, cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < g.rank; ++d) n *= g.index[d];
  if (n == 0) return;
  with_index(idx_int64, [&](auto i) {
    using I = decltype(i);
    if (reduction == ScatterReduction::None) {
      with_carrier(elem, "ScatterElements kernel", [&](auto e) {
        using E = decltype(e);
        scatter_elements<E, I><<<grid_for(n), kBlock, 0, stream>>>(
            static_cast<const I*>(idx), static_cast<const E*>(updates), static_cast<E*>(y), n, g, reduction);
      });
    } else {
      with_scatter_type(type, [&](auto t) {
        using T = decltype(t);
        scatter_elements<T, I><<<grid_for(n), kBlock, 0, stream>>>(
            static_cast<const I*>(idx), static_cast<const T*>(updates), static_cast<T*>(y), n, g, reduction);
      });
    }
  });
  check_launch("ScatterElements kernel");
}

void launch_scatter_nd(const void* idx, bool idx_int64, const void* updates, void* y, size_t elem, ScatterType type,
                       ScatterReduction reduction, const ScatterNDDims& g, cudaStream_t stream) {
  const int64_t n = g.tuples * g.slice;
  if (n == 0) return;
  with_index(idx_int64, [&](auto i) {
    using I = decltype(i);
    if (reduction == ScatterReduction::None) {
      with_carrier(elem, "ScatterND kernel", [&](auto e) {
        using E = decltype(e);
        scatter_nd<E, I><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const I*>(idx),
                                                             static_cast<const E*>(updates), static_cast<E*>(y), n, g,
                                                             reduction);
      });
    } else {
      with_scatter_type(type, [&](auto t) {
        using T = decltype(t);
        scatter_nd<T, I><<<grid_for(n), kBlock, 0, stream>>>(static_cast<const I*>(idx),
                                                             static_cast<const T*>(updates), static_cast<T*>(y), n, g,
                                                             reduction);
      });
    }
  });
  check_launch("ScatterND kernel");
}

}  // namespace dnnx::cuda
