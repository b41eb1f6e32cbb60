// NonMaxSuppression's device kernels (nms_kernels.cu), launched by nms_cuda.cc's staged kernel
// (Note [device staged kernels] in runtime/staged_kernel.h).
//
// Note [device nms]: the result is onnxruntime's CPU kernel's (ops/indexing/
// non_max_suppression.cc on the host), computed per segment s = (batch, class) of S = B * C:
//   keys     one 64-bit key per score: bit 63 set where the box is a candidate (score >
//            score_threshold, or every box without one), bits 31..62 the score's order-preserving
//            bits (-0.0 taken as +0.0: they tie there), bits 0..30 ~index. Descending keys are the
//            candidates by score, ties by the lower index first: the host heap's order. Keys are
//            unique, so the sort needs no stability, and an exact tie is broken as there;
//   sort     cub::DeviceSegmentedRadixSort over the S segments of N keys;
//   gather   the boxes in sorted order, side by side (corners, area, index), for coalesced reads;
//   greedy   the sorted candidates in spans of 256, one launch per span for every segment at once.
//            Each block of the step resolves the span in order: candidate t is kept unless a kept
//            box suppressed it in an earlier step (its mark) or a kept earlier span candidate does
//            (the span's own 256 x 256 suppression matrix, as torchvision's mask blocks, computed
//            for every span at once before the steps), until max_output_boxes_per_class. Then every later candidate of the
//            segment (a thread each, spread over as many blocks as there are) is tested against
//            the boxes the span kept and marked where one suppresses it. That is the host's greedy
//            loop exactly: a candidate is kept unless some kept box before it suppresses it, and
//            each kept box is tested against each later candidate once, in parallel over the GPU.
//            Measured on an H100 (SSDlite: one segment of ~27,000 boxes, thousands kept): the
//            one-block-per-segment greedy of session 9 took 370 ms of a 490 ms run; steps of 64
//            took 422 launches of 16 us; spans of 256 that computed their own matrix, 106 of 104 us. The workspace is O(S * N); a whole IoU matrix would be
//            O(S * N^2) (8400 YOLO boxes of 80 classes: 700 MB). A segment that is done returns
//            at once in the later launches;
//   count    the kept counts per segment scanned into output offsets (runtime/offsets_scan.h);
//            the host reads the total and the status with one small copy;
//   write    each segment's kept boxes as rows (batch, class, box) at its offset.
// The IoU test is the host's, operand for operand: candidate against kept box, std::max/std::min's
// argument order (which decides a NaN corner), no fused multiply-add (__fmul_rn, __fadd_rn, ...),
// so every float rounds as it does on the host. A NaN score among the candidates (possible only
// without a score_threshold) makes the status send the run to the host: the host heap's order of
// NaNs follows from std::priority_queue's steps, which no sort reproduces. max_output_boxes_per_class,
// iou_threshold and score_threshold are read on the device; an iou_threshold outside [0, 1] is
// reported in the status and raised by the host as the CPU does.
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace dnnx::cuda {

// boxes [batches, boxes, 4] and scores [batches, classes, boxes], float32.
struct NmsDims {
  int64_t batches = 0, classes = 0, boxes = 0;
  bool center_point_box = false;
  int64_t segments() const { return batches * classes; }
};

// The node's inputs on the device; the three scalars may be null (absent).
struct NmsInputs {
  const float* boxes = nullptr;
  const float* scores = nullptr;
  const int64_t* max_output = nullptr;
  const float* iou_threshold = nullptr;
  const float* score_threshold = nullptr;
};

// What the host reads back after the count, in one copy: the selections' total and the status.
struct NmsReadback {
  int64_t total = 0;
  int32_t nan_score = 0;  // a candidate's score is NaN: the host computes this run
  int32_t bad_iou = 0;    // iou_threshold is outside [0, 1] (its value in `iou`)
  float iou = 0.0f;
  int32_t unused = 0;
};

// A segment's greedy so far: the boxes kept, and whether it has ended (max_output_boxes_per_class
// reached, or no candidate left).
struct NmsProgress {
  int32_t kept = 0;
  int32_t done = 0;
};

// The workspace's parts (each 256-byte aligned), for dims `d`.
struct NmsWorkspace {
  size_t selected = 0;  // int64 [S + 1] kept counts, scanned in place, then the NmsReadback's status
  size_t begins = 0;    // int [S + 1] segment offsets for the sort
  size_t keys_in = 0, keys_out = 0;  // uint64 [S * N]
  size_t sorted_box = 0;  // float4 [S * N]: the box of each sorted position (y_min, x_min, y_max, x_max)
  size_t sorted_area = 0;  // float [S * N]
  size_t sorted_index = 0;  // int [S * N]: its box index, -1 past the candidates
  size_t span_masks = 0;  // uint64 [S][spans][256][4]: each span's own suppression matrix
  size_t removed = 0;  // uint8 [S * N]: a sorted candidate suppressed by a kept box
  size_t progress = 0;  // NmsProgress [2 * S]: two parities, one read and one written per step
  size_t kept_index = 0;  // int [S * N]
  size_t sort_temp = 0;  // cub's
  size_t sort_temp_bytes = 0;
  size_t bytes = 0;  // in all
};
NmsWorkspace nms_workspace(const NmsDims& d);  // asks cub for its sort's temporary bytes

// Queues keys, sort, greedy and count; the NmsReadback is then at `workspace + nms_readback_offset(d)`.
void launch_nms_count(const NmsInputs& in, const NmsDims& d, const NmsWorkspace& w, void* workspace,
                      cudaStream_t stream);
size_t nms_readback_offset(const NmsDims& d, const NmsWorkspace& w);
// y [total, 3] int64: (batch, class, box) per selection, segment by segment.
void launch_nms_write(const NmsDims& d, const NmsWorkspace& w, const void* workspace, int64_t* y, cudaStream_t stream);

}  // namespace dnnx::cuda
