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
//   greedy   one block per segment walks its sorted candidates in chunks of 64. The block computes,
//            in parallel, which chunk candidates a box kept before suppresses (one bit each) and
//            the chunk's own suppression matrix (64 words of 64 bits: candidate t against the
//            earlier candidate u, as torchvision's mask blocks); one thread then resolves the
//            chunk in order with those bits (t is kept unless a kept box or a kept earlier chunk
//            candidate suppresses it) and stops at max_output_boxes_per_class. That is the host's
//            greedy loop exactly, with its work spread; the kept boxes stay in the workspace
//            (O(S * N), where a whole IoU matrix would be O(S * N^2): 8400 YOLO boxes of 80
//            classes would need 700 MB);
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

// The workspace's parts (each 256-byte aligned), for dims `d`.
struct NmsWorkspace {
  size_t selected = 0;  // int64 [S + 1] kept counts, scanned in place, then the NmsReadback's status
  size_t begins = 0;    // int [S + 1] segment offsets for the sort
  size_t keys_in = 0, keys_out = 0;  // uint64 [S * N]
  size_t kept_box = 0;  // float4 [S * N]: a kept box's corners (y_min, x_min, y_max, x_max)
  size_t kept_area = 0;  // float [S * N]
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
