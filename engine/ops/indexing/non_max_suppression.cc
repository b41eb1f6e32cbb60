// NonMaxSuppression on the host (Note [value-shaped compute] in value_shaped_ops.h), as
// onnxruntime's CPU kernel computes it: per batch and class, the candidates (score >
// score_threshold when given) go into a max-heap by (score, lower index first); the top one is
// kept unless its IoU with a box kept before in this class is > iou_threshold, until the heap is
// empty or max_output_boxes_per_class are kept. The heap is std::priority_queue with onnxruntime's
// ordering, so equal scores (and NaN ones, which the ordering does not rank) come out as they do
// there. IoU: 0 when the boxes do not overlap with a positive area; area = (x2 - x1) * (y2 - y1)
// of the ordered corners (center_point_box 0) or width * height as given (1).
#include <algorithm>
#include <cstring>
#include <queue>

#include "ops/indexing/value_shaped_ops.h"
#include "ops/indexing/value_shaped.h"

namespace dnnx {

namespace {

struct Candidate {
  float score;
  int64_t index;
  float box[4];  // y_min, x_min, y_max, x_max
  float area;

  Candidate(float s, int64_t i, bool center_point_box, const float* b) : score(s), index(i) {
    if (!center_point_box) {  // [y1, x1, y2, x2], either corner first
      ordered(b[1], b[3], box[1], box[3]);
      ordered(b[0], b[2], box[0], box[2]);
      area = (box[2] - box[0]) * (box[3] - box[1]);
    } else {  // [x_center, y_center, width, height]
      const float half_w = b[2] / 2, half_h = b[3] / 2;
      box[1] = b[0] - half_w;
      box[3] = b[0] + half_w;
      box[0] = b[1] - half_h;
      box[2] = b[1] + half_h;
      area = (box[3] - box[1]) * (box[2] - box[0]);
    }
  }
  static void ordered(float a, float b, float& lo, float& hi) {
    if (a >= b) {
      lo = b;
      hi = a;
    } else {
      lo = a;
      hi = b;
    }
  }
  // The heap's order: a higher score first, then the lower index.
  bool operator<(const Candidate& rhs) const { return score < rhs.score || (score == rhs.score && index > rhs.index); }
};

// Note [kept boxes in columns]: the greedy loop tests each candidate against every box kept so
// far in its class, onnxruntime's test:
//   x_min = max(box x1, kept x1), x_max = min(box x2, kept x2): none where x_max <= x_min;
//   y likewise; intersection = (x_max - x_min) * (y_max - y_min): none where it is <= 0;
//   suppressed where intersection / (area + kept area - intersection) > iou_threshold. torchvision's batched NMS (SSDlite: one class of some 27,000 boxes offset per
// label, so that few suppress each other) keeps thousands, and that test was 54% of SSDlite's CPU
// run (perf, 2026-12-06). So the kept boxes are also held as columns, and a block of them is
// tested without branches, which the compiler vectorizes (AVX-512 / AVX2 clones): the same float
// operations as Candidate::suppressed_by, operand for operand (std::max(a, b) is a < b ? b : a,
// std::min(a, b) is b < a ? b : a; an early return becomes a false lane, NaN comparisons
// included), so the same boxes are suppressed, and no multiply-add is fused (fp-contract off:
// the clones have FMA). The blocks stop at the first suppressor.
struct KeptColumns {
  std::vector<float> y1, x1, y2, x2, area;
  void clear() {
    y1.clear(), x1.clear(), y2.clear(), x2.clear(), area.clear();
  }
  void push(const Candidate& c) {
    y1.push_back(c.box[0]), x1.push_back(c.box[1]), y2.push_back(c.box[2]), x2.push_back(c.box[3]);
    area.push_back(c.area);
  }
};

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DNNX_NMS_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=off")))
#else
#define DNNX_NMS_CLONES
#endif

// Whether any of kept boxes [begin, end) suppresses the candidate (box, area).
DNNX_NMS_CLONES bool block_suppresses(const float* __restrict__ ky1, const float* __restrict__ kx1,
                                      const float* __restrict__ ky2, const float* __restrict__ kx2,
                                      const float* __restrict__ karea, int64_t begin, int64_t end, const float* box,
                                      float area, float iou_threshold) {
  const float b0 = box[0], b1 = box[1], b2 = box[2], b3 = box[3];
  int hit = 0;
  for (int64_t j = begin; j < end; ++j) {
    const float x_min = b1 < kx1[j] ? kx1[j] : b1, x_max = kx2[j] < b3 ? kx2[j] : b3;
    const float y_min = b0 < ky1[j] ? ky1[j] : b0, y_max = ky2[j] < b2 ? ky2[j] : b2;
    const float intersection = (x_max - x_min) * (y_max - y_min);
    const float union_area = area + karea[j] - intersection;
    // & not &&: every lane computes every step (no branch), and the lanes' results are the same
    hit |= static_cast<int>(!(x_max <= x_min)) & static_cast<int>(!(y_max <= y_min)) &
           static_cast<int>(!(intersection <= 0.0f)) & static_cast<int>(intersection / union_area > iou_threshold);
  }
  return hit != 0;
}

bool any_suppresses(const KeptColumns& kept, const Candidate& c, float iou_threshold) {
  constexpr int64_t kBlock = 256;
  const auto n = static_cast<int64_t>(kept.area.size());
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    if (block_suppresses(kept.y1.data(), kept.x1.data(), kept.y2.data(), kept.x2.data(), kept.area.data(), begin,
                         std::min(n, begin + kBlock), c.box, c.area, iou_threshold)) {
      return true;
    }
  }
  return false;
}

const ConstTensor* input_at(const ValueShapedInputs& inputs, size_t i) {
  return i < inputs.size() ? inputs[i] : nullptr;
}

// An optional one-value input ([] or [1]) of `dtype`, or null when absent.
template <class T>
const T* scalar_input(const Node& node, const ValueShapedInputs& inputs, size_t i, DType dtype, const char* what) {
  const ConstTensor* t = input_at(inputs, i);
  if (!t) return nullptr;
  if (t->info.dtype != dtype || t->info.shape.size() > 1 || numel(t->info.shape) != 1) {
    node_fail<InvalidModelError>(node, std::string(what) + " " + t->info.str() + " must be one " + dtype_name(dtype) +
                                           " value ([] or [1])");
  }
  return t->as<T>();
}

}  // namespace

std::vector<ConstTensor> non_max_suppression(const Node& node, const ValueShapedInputs& inputs) {
  const NmsAttrs attrs = nms_attrs(node);
  const ConstTensor* boxes = input_at(inputs, 0);
  const ConstTensor* scores = input_at(inputs, 1);
  if (!boxes || !scores) node_fail<InvalidModelError>(node, "boxes and scores are required inputs");
  if (boxes->info.dtype != DType::Float32 || scores->info.dtype != DType::Float32) {
    node_fail<UnsupportedModelError>(node, "boxes (" + boxes->info.str() + ") and scores (" + scores->info.str() +
                                               ") must be float32");
  }
  const Shape& bs = boxes->info.shape;
  const Shape& ss = scores->info.shape;
  if (bs.size() != 3 || ss.size() != 3 || bs[2] != 4 || bs[0] != ss[0] || bs[1] != ss[2]) {
    node_fail<InvalidModelError>(node, "boxes " + shape_str(bs) + " and scores " + shape_str(ss) +
                                           " must be [batches, boxes, 4] and [batches, classes, boxes]");
  }
  const int64_t* max_output = scalar_input<int64_t>(node, inputs, 2, DType::Int64, "max_output_boxes_per_class");
  const float* iou_input = scalar_input<float>(node, inputs, 3, DType::Float32, "iou_threshold");
  const float* score_input = scalar_input<float>(node, inputs, 4, DType::Float32, "score_threshold");
  const int64_t max_per_class = max_output ? std::max<int64_t>(*max_output, 0) : 0;
  const float iou_threshold = iou_input ? *iou_input : 0.0f;
  if (!(iou_threshold >= 0.0f && iou_threshold <= 1.0f)) {
    node_fail<InputError>(node, "iou_threshold " + std::to_string(iou_threshold) + " must be in [0, 1]");
  }

  const int64_t batches = bs[0], classes = ss[1], count = bs[1];
  std::vector<int64_t> selected;  // (batch, class, box) triples
  if (max_per_class > 0) {
    KeptColumns kept;
    for (int64_t b = 0; b < batches; ++b) {
      const float* batch_boxes = boxes->as<float>() + b * count * 4;
      for (int64_t c = 0; c < classes; ++c) {
        const float* class_scores = scores->as<float>() + (b * classes + c) * count;
        std::vector<Candidate> candidates;
        candidates.reserve(static_cast<size_t>(count));
        for (int64_t i = 0; i < count; ++i) {
          if (!score_input || class_scores[i] > *score_input) {
            candidates.emplace_back(class_scores[i], i, attrs.center_point_box, batch_boxes + i * 4);
          }
        }
        std::priority_queue<Candidate, std::vector<Candidate>> heap(std::less<Candidate>(), std::move(candidates));
        kept.clear();
        while (!heap.empty() && static_cast<int64_t>(kept.area.size()) < max_per_class) {
          const Candidate& top = heap.top();
          if (!any_suppresses(kept, top, iou_threshold)) {  // Note [kept boxes in columns]
            kept.push(top);
            selected.insert(selected.end(), {b, c, top.index});
          }
          heap.pop();
        }
      }
    }
  }
  ConstTensor out;
  out.info = TensorInfo{{static_cast<int64_t>(selected.size() / 3), 3}, DType::Int64};
  out.data.resize(selected.size() * sizeof(int64_t));
  if (!selected.empty()) std::memcpy(out.data.data(), selected.data(), out.data.size());
  std::vector<ConstTensor> outputs;
  outputs.push_back(std::move(out));
  return outputs;
}

}  // namespace dnnx
