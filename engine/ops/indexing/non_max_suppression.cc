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

  bool suppressed_by(const Candidate& kept, float iou_threshold) const {
    const float x_min = std::max(box[1], kept.box[1]), x_max = std::min(box[3], kept.box[3]);
    if (x_max <= x_min) return false;
    const float y_min = std::max(box[0], kept.box[0]), y_max = std::min(box[2], kept.box[2]);
    if (y_max <= y_min) return false;
    const float intersection = (x_max - x_min) * (y_max - y_min);
    if (intersection <= 0.0f) return false;
    const float union_area = area + kept.area - intersection;
    return intersection / union_area > iou_threshold;
  }
};

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
    std::vector<Candidate> kept;
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
        while (!heap.empty() && static_cast<int64_t>(kept.size()) < max_per_class) {
          const Candidate& top = heap.top();
          const bool suppressed = std::any_of(kept.begin(), kept.end(),
                                              [&](const Candidate& k) { return top.suppressed_by(k, iou_threshold); });
          if (!suppressed) {
            kept.push_back(top);
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
