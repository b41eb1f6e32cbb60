// NonMaxSuppression's kernels: Note [device nms] in nms_kernels.h.
#include <algorithm>

#include <cub/device/device_segmented_radix_sort.cuh>

#include "backends/cuda/roi/nms_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/grid_loop.cuh"
#include "backends/cuda/runtime/launch.cuh"
#include "backends/cuda/runtime/offsets_scan.h"

namespace dnnx::cuda {

namespace {

constexpr int kSpan = 256;  // sorted candidates resolved per step (Note [device nms])
constexpr int kSpanWords = kSpan / 64;  // a row of the span's suppression matrix, in 64-bit words
constexpr int kStepThreads = 256;  // threads per step block: one per span candidate, then per later candidate
static_assert(kStepThreads >= kSpan, "a step block loads its span a thread per candidate");
constexpr uint64_t kCandidate = uint64_t{1} << 63;
constexpr uint32_t kIndexBits = 0x7fffffffu;

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

// One box as the host holds it: its ordered corners and its area (Candidate's constructor in
// ops/indexing/non_max_suppression.cc), with no contraction into fused multiply-adds.
struct Box {
  float4 c;  // y_min, x_min, y_max, x_max
  float area;
};

// The host's `ordered`: (lo, hi) of a, b, the first taken as hi where a >= b (NaN: a is lo).
__device__ inline void ordered(float a, float b, float& lo, float& hi) {
  if (a >= b) {
    lo = b;
    hi = a;
  } else {
    lo = a;
    hi = b;
  }
}

__device__ inline Box load_box(const float* b, bool center_point_box) {
  Box box;
  if (!center_point_box) {  // [y1, x1, y2, x2], either corner first
    ordered(b[1], b[3], box.c.y, box.c.w);
    ordered(b[0], b[2], box.c.x, box.c.z);
    box.area = __fmul_rn(__fsub_rn(box.c.z, box.c.x), __fsub_rn(box.c.w, box.c.y));
  } else {  // [x_center, y_center, width, height]
    const float half_w = __fdiv_rn(b[2], 2.0f), half_h = __fdiv_rn(b[3], 2.0f);
    box.c.y = __fsub_rn(b[0], half_w);
    box.c.w = __fadd_rn(b[0], half_w);
    box.c.x = __fsub_rn(b[1], half_h);
    box.c.z = __fadd_rn(b[1], half_h);
    box.area = __fmul_rn(__fsub_rn(box.c.w, box.c.y), __fsub_rn(box.c.z, box.c.x));
  }
  return box;
}

// std::max and std::min as the host calls them (the first argument wins a tie or a NaN test).
__device__ inline float std_max(float a, float b) { return a < b ? b : a; }
__device__ inline float std_min(float a, float b) { return b < a ? b : a; }

// Candidate::suppressed_by: whether `kept` suppresses `cand` (IoU > threshold).
__device__ inline bool suppressed(const Box& cand, const Box& kept, float iou_threshold) {
  const float x_min = std_max(cand.c.y, kept.c.y), x_max = std_min(cand.c.w, kept.c.w);
  if (x_max <= x_min) return false;
  const float y_min = std_max(cand.c.x, kept.c.x), y_max = std_min(cand.c.z, kept.c.z);
  if (y_max <= y_min) return false;
  const float intersection = __fmul_rn(__fsub_rn(x_max, x_min), __fsub_rn(y_max, y_min));
  if (intersection <= 0.0f) return false;
  const float union_area = __fsub_rn(__fadd_rn(cand.area, kept.area), intersection);
  return __fdiv_rn(intersection, union_area) > iou_threshold;
}

// A float's bits as an unsigned integer of the same order (-0.0 as +0.0).
__device__ inline uint32_t order_bits(float v) {
  const uint32_t u = __float_as_uint(v == 0.0f ? 0.0f : v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// keys [S * N] (Note [device nms]) and the sort's segment offsets; the status's threshold check.
__global__ void nms_keys(NmsInputs in, NmsDims d, uint64_t* keys, int* begins, NmsReadback* status) {
  const int64_t segments = d.batches * d.classes, items = segments * d.boxes;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (first == 0 && in.iou_threshold) {
    const float iou = *in.iou_threshold;
    if (!(iou >= 0.0f && iou <= 1.0f)) {
      status->bad_iou = 1;
      status->iou = iou;
    }
  }
  for (int64_t i = first; i <= segments; i += stride) begins[i] = static_cast<int>(i * d.boxes);
  for (int64_t i = first; i < items; i += stride) {
    const float score = in.scores[i];
    const uint32_t box = static_cast<uint32_t>(i % d.boxes);
    const bool candidate = !in.score_threshold || score > *in.score_threshold;
    uint64_t key = kIndexBits - box;
    if (candidate) {
      key |= kCandidate | (static_cast<uint64_t>(order_bits(score)) << 31);
      if (isnan(score)) status->nan_score = 1;
    }
    keys[i] = key;
  }
}

// The sorted candidates' boxes side by side, for the steps' coalesced reads: position i of
// segment s holds the box of sorted key i (its corners, area and index), index -1 past the
// candidates.
__global__ void nms_gather(NmsInputs in, NmsDims d, const uint64_t* sorted, float4* corners, float* areas,
                           int* indices) {
  const int64_t items = d.batches * d.classes * d.boxes;
  DNNX_GRID_LOOP(i, items) {
    const uint64_t key = sorted[i];
    if (!(key & kCandidate)) {
      indices[i] = -1;
      continue;
    }
    const int64_t batch = i / d.boxes / d.classes;
    const int box = static_cast<int>(kIndexBits - static_cast<uint32_t>(key & kIndexBits));
    const Box b = load_box(in.boxes + (batch * d.boxes + box) * 4, d.center_point_box);
    corners[i] = b.c;
    areas[i] = b.area;
    indices[i] = box;
  }
}

// Every span's own suppression matrix, all spans at once (they depend on the boxes alone): block
// (span, segment), thread t its row t, bit u of word u / 64 set where earlier span candidate u
// suppresses t. masks [S][spans][kSpan][kSpanWords].
__global__ void __launch_bounds__(kStepThreads)
    nms_span_masks(NmsInputs in, NmsDims d, const float4* corners, const float* areas, const int* indices,
                   int64_t spans, unsigned long long* masks) {
  __shared__ Box span[kSpan];
  __shared__ int valid[kSpan];
  const int64_t s = blockIdx.x / spans, j = blockIdx.x % spans;
  const int64_t first = s * d.boxes + j * kSpan;  // the span's first sorted position
  const int t = threadIdx.x;
  const bool mine = t < kSpan && j * kSpan + t < d.boxes && indices[first + t] >= 0;
  if (t < kSpan) {
    valid[t] = mine;
    if (mine) span[t] = Box{corners[first + t], areas[first + t]};
  }
  __syncthreads();
  if (t >= kSpan) return;
  const float iou_threshold = in.iou_threshold ? *in.iou_threshold : 0.0f;
  unsigned long long* row = masks + ((s * spans + j) * kSpan + t) * kSpanWords;
  for (int w = 0; w < kSpanWords; ++w) {
    unsigned long long bits = 0;
    for (int b = 0; b < 64; ++b) {
      const int u = w * 64 + b;
      if (mine && u < t && valid[u] && suppressed(span[t], span[u], iou_threshold)) bits |= 1ull << b;
    }
    row[w] = bits;
  }
}

// One step of the greedy (Note [device nms]): span `step` (kSpan sorted positions) of every
// segment. Block (s, part): segment s's span resolved in order (every block of the segment does
// it, from the same inputs, to hold the span's kept boxes in its shared memory), then the later
// candidates [base + kSpan + part * kStepThreads, +kStepThreads) tested against those kept boxes.
// Part 0 records the kept indices and the segment's progress. progress[(step & 1) * S + s] is read
// and the other parity written, so that no block reads what another block of the step writes.
__global__ void __launch_bounds__(kStepThreads)
    nms_step(NmsInputs in, NmsDims d, const float4* corners, const float* areas, const int* indices,
             const unsigned long long* masks, int64_t step, int64_t blocks_per_segment, uint8_t* removed,
             int* kept_index, NmsProgress* progress) {
  __shared__ Box span[kSpan];
  __shared__ int span_index[kSpan];
  __shared__ unsigned char span_removed[kSpan];
  __shared__ unsigned long long by_earlier[kSpan][kSpanWords];  // bit u of row t: span candidate u suppresses t
  __shared__ Box kept[kSpan];  // the boxes this span keeps
  __shared__ int kept_at[kSpan];  // their places in the span
  __shared__ int kept_n;
  __shared__ int done_s;
  const int64_t segments = d.batches * d.classes;
  const int64_t s = blockIdx.x / blocks_per_segment, part = blockIdx.x % blocks_per_segment;
  const int64_t base = step * kSpan;
  const NmsProgress prev = progress[(step & 1) * segments + s];
  NmsProgress* next = progress + ((step + 1) & 1) * segments + s;
  const int tid = threadIdx.x;
  const bool recorder = part == 0 && tid == 0;
  if (prev.done || base >= d.boxes) {
    if (recorder) *next = NmsProgress{prev.kept, 1};
    return;
  }
  const int64_t first = s * d.boxes;  // the segment's sorted positions in the gathered arrays
  bool valid = false;
  const int64_t spans = (d.boxes + kSpan - 1) / kSpan;
  if (tid < kSpan) {
    const unsigned long long* row = masks + ((s * spans + step) * kSpan + tid) * kSpanWords;
    for (int w = 0; w < kSpanWords; ++w) by_earlier[tid][w] = row[w];
    const int64_t at = base + tid;
    if (at < d.boxes && indices[first + at] >= 0) {
      valid = true;
      span[tid] = Box{corners[first + at], areas[first + at]};
      span_index[tid] = indices[first + at];
      span_removed[tid] = removed[first + at];
    }
  }
  const int count = __syncthreads_count(valid);  // the candidates come first in the sorted keys
  if (count == 0) {
    if (recorder) *next = NmsProgress{prev.kept, 1};
    return;
  }
  const float iou_threshold = in.iou_threshold ? *in.iou_threshold : 0.0f;
  if (tid == 0) {  // the host's loop over this span, in order
    const int64_t max_per_class = in.max_output && *in.max_output > 0 ? *in.max_output : 0;  // <= 0: none
    unsigned long long chosen[kSpanWords] = {};
    int n = prev.kept, k = 0;
    for (int t = 0; t < count && n < max_per_class; ++t) {
      if (span_removed[t]) continue;
      unsigned long long hit = 0;
#pragma unroll
      for (int w = 0; w < kSpanWords; ++w) hit |= by_earlier[t][w] & chosen[w];  // later words: 0 bits
      if (hit) continue;
#pragma unroll
      for (int w = 0; w < kSpanWords; ++w) chosen[w] |= w == t / 64 ? 1ull << (t % 64) : 0ull;
      kept_at[k++] = t;
      ++n;
    }
    kept_n = k;
    done_s = n >= max_per_class || count < kSpan || base + kSpan >= d.boxes;
    if (part == 0) *next = NmsProgress{n, done_s};
  }
  __syncthreads();
  if (tid < kept_n) {  // the kept boxes gathered, and recorded, in parallel
    kept[tid] = span[kept_at[tid]];
    if (part == 0) kept_index[first + prev.kept + tid] = span_index[kept_at[tid]];
  }
  __syncthreads();
  if (done_s || kept_n == 0) return;  // no later candidate is tested, or none is suppressed now
  const int64_t t = base + kSpan + part * kStepThreads + tid;
  if (t >= d.boxes || indices[first + t] < 0 || removed[first + t]) return;
  const Box cand{corners[first + t], areas[first + t]};
  for (int k = 0; k < kept_n; ++k) {
    if (suppressed(cand, kept[k], iou_threshold)) {
      removed[first + t] = 1;
      return;
    }
  }
}

// The kept counts per segment, after the last step, where the offsets scan reads them.
__global__ void nms_counts(const NmsProgress* progress, int64_t segments, int64_t* counts) {
  DNNX_GRID_LOOP(s, segments) counts[s] = progress[s].kept;
}

// y's rows of one segment per block: (batch, class, box) at the segment's offset.
__global__ void nms_write(NmsDims d, const int64_t* offsets, const int* kept_index, int64_t* y) {
  const int64_t s = blockIdx.x;
  const int64_t first = offsets[s], count = offsets[s + 1] - first;
  for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
    int64_t* row = y + (first + k) * 3;
    row[0] = s / d.classes;
    row[1] = s % d.classes;
    row[2] = kept_index[s * d.boxes + k];
  }
}

template <class T>
T* part(void* workspace, size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(workspace) + offset);
}

}  // namespace

NmsWorkspace nms_workspace(const NmsDims& d) {
  const size_t segments = static_cast<size_t>(d.segments()), items = segments * static_cast<size_t>(d.boxes);
  NmsWorkspace w;
  size_t at = 0;
  auto take = [&at](size_t bytes) {
    const size_t here = at;
    at += aligned(bytes);
    return here;
  };
  w.selected = take((segments + 1) * sizeof(int64_t) + sizeof(NmsReadback) - sizeof(int64_t));
  w.begins = take((segments + 1) * sizeof(int));
  w.keys_in = take(items * sizeof(uint64_t));
  w.keys_out = take(items * sizeof(uint64_t));
  w.sorted_box = take(items * sizeof(float4));
  w.sorted_area = take(items * sizeof(float));
  w.sorted_index = take(items * sizeof(int));
  w.span_masks = take(static_cast<size_t>(segments) * static_cast<size_t>((d.boxes + kSpan - 1) / kSpan) * kSpan *
                      kSpanWords * sizeof(unsigned long long));
  w.removed = take(items);
  w.progress = take(2 * segments * sizeof(NmsProgress));
  w.kept_index = take(items * sizeof(int));
  if (items > 0) {
    check(cub::DeviceSegmentedRadixSort::SortKeysDescending(
              nullptr, w.sort_temp_bytes, static_cast<const uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
              static_cast<int>(items), static_cast<int>(segments), static_cast<const int*>(nullptr),
              static_cast<const int*>(nullptr)),
          "cub::DeviceSegmentedRadixSort (temporary storage)");
  }
  w.sort_temp = take(w.sort_temp_bytes);
  w.bytes = at;
  return w;
}

size_t nms_readback_offset(const NmsDims& d, const NmsWorkspace& w) {
  return w.selected + static_cast<size_t>(d.segments()) * sizeof(int64_t);
}

void launch_nms_count(const NmsInputs& in, const NmsDims& d, const NmsWorkspace& w, void* workspace,
                      cudaStream_t stream) {
  const int64_t segments = d.segments(), items = segments * d.boxes;
  auto* readback = part<NmsReadback>(workspace, nms_readback_offset(d, w));
  check(cudaMemsetAsync(readback, 0, sizeof(NmsReadback), stream), "cudaMemsetAsync (NonMaxSuppression's status)");
  auto* begins = part<int>(workspace, w.begins);
  auto* keys_in = part<uint64_t>(workspace, w.keys_in);
  auto* keys_out = part<uint64_t>(workspace, w.keys_out);
  nms_keys<<<grid_for(std::max(items, segments + 1)), kBlock, 0, stream>>>(in, d, keys_in, begins, readback);
  check_launch("nms keys");
  auto* counts = part<int64_t>(workspace, w.selected);
  if (items > 0) {
    size_t temp_bytes = w.sort_temp_bytes;
    check(cub::DeviceSegmentedRadixSort::SortKeysDescending(part<void>(workspace, w.sort_temp), temp_bytes, keys_in,
                                                            keys_out, static_cast<int>(items),
                                                            static_cast<int>(segments), begins, begins + 1, 0, 64,
                                                            stream),
          "cub::DeviceSegmentedRadixSort");
    // Note [device nms]: the boxes in sorted order, then one launch per span of kSpan sorted
    // positions, each sized to the later candidates it tests; a segment that is done returns at once.
    auto* corners = part<float4>(workspace, w.sorted_box);
    auto* areas = part<float>(workspace, w.sorted_area);
    auto* indices = part<int>(workspace, w.sorted_index);
    nms_gather<<<grid_for(items), kBlock, 0, stream>>>(in, d, keys_out, corners, areas, indices);
    check_launch("nms gather");
    auto* removed = part<uint8_t>(workspace, w.removed);
    auto* progress = part<NmsProgress>(workspace, w.progress);
    check(cudaMemsetAsync(removed, 0, static_cast<size_t>(items), stream), "cudaMemsetAsync (NonMaxSuppression's marks)");
    check(cudaMemsetAsync(progress, 0, 2 * static_cast<size_t>(segments) * sizeof(NmsProgress), stream),
          "cudaMemsetAsync (NonMaxSuppression's progress)");
    const int64_t steps = (d.boxes + kSpan - 1) / kSpan;
    auto* masks = part<unsigned long long>(workspace, w.span_masks);
    nms_span_masks<<<static_cast<unsigned>(steps * segments), kStepThreads, 0, stream>>>(in, d, corners, areas, indices,
                                                                                         steps, masks);
    check_launch("nms span masks");
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t later = d.boxes - (step + 1) * kSpan;
      const int64_t per_segment = std::max<int64_t>(1, (later + kStepThreads - 1) / kStepThreads);
      nms_step<<<static_cast<unsigned>(per_segment * segments), kStepThreads, 0, stream>>>(
          in, d, corners, areas, indices, masks, step, per_segment, removed, part<int>(workspace, w.kept_index),
          progress);
    }
    check_launch("nms step");
    nms_counts<<<grid_for(segments), kBlock, 0, stream>>>(progress + (steps & 1) * segments, segments, counts);
    check_launch("nms counts");
  } else if (segments > 0) {
    check(cudaMemsetAsync(counts, 0, static_cast<size_t>(segments) * sizeof(int64_t), stream),
          "cudaMemsetAsync (NonMaxSuppression's counts)");
  }
  launch_offsets_scan(counts, segments, stream);
}

void launch_nms_write(const NmsDims& d, const NmsWorkspace& w, const void* workspace, int64_t* y, cudaStream_t stream) {
  const int64_t segments = d.segments();
  if (segments == 0 || d.boxes == 0) return;
  void* ws = const_cast<void*>(workspace);
  nms_write<<<static_cast<unsigned>(segments), 128, 0, stream>>>(d, part<int64_t>(ws, w.selected),
                                                                part<int>(ws, w.kept_index), y);
  check_launch("nms write");
}

}  // namespace dnnx::cuda
