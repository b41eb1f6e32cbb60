// NonMaxSuppression on CUDA as a staged kernel (Note [device staged kernels] in
// runtime/staged_kernel.h; the kernels and the order of their result: Note [device nms] in
// nms_kernels.h): boxes [B, N, 4] and scores [B, C, N] float32, the three optional scalars read on
// the device -> selected_indices [num_selected, 3] int64, exactly the host compute's
// (ops/indexing/non_max_suppression.cc, onnxruntime's CPU kernel). The plan stops before the node
// (Note [staged plans]); the count crosses to the host as one small copy, with a status that
// raises a bad iou_threshold as the host does, or hands a run with NaN scores to the host. What
// the host compute refuses (shapes that do not agree, a scalar of another type) is left to it.
#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/roi/nms_kernels.h"
#include "backends/cuda/runtime/cuda_check.h"
#include "backends/cuda/runtime/small_readback.h"
#include "ops/indexing/value_shaped.h"

namespace dnnx::cuda {

namespace {

constexpr int64_t kMaxItems = 0x7fffffff;  // cub's segmented sort counts its keys in int

class NmsKernel final : public StagedKernel {
 public:
  NmsKernel(const CudaContext& ctx, std::string where, NmsDims dims, NmsWorkspace parts)
      : ctx_(ctx), where_(std::move(where)), dims_(dims), parts_(parts) {}

  StagedCount count(const StagedArgs& args) const override {
    launch_nms_count(inputs(args), dims_, parts_, args.workspace, ctx_.stream);
    NmsReadback r;  // the one small copy: the total and the status, after the kernels before it
    const char* at = static_cast<const char*>(args.workspace) + nms_readback_offset(dims_, parts_);
    read_back_small(ctx_.stream, at, &r, sizeof(r), "NonMaxSuppression's count");
    if (r.bad_iou) throw InputError(where_ + ": iou_threshold " + std::to_string(r.iou) + " must be in [0, 1]");
    StagedCount out;
    if (r.nan_score) {
      out.on_host = "a candidate's score is NaN: the host's heap order ranks it";
      return out;
    }
    out.outputs.push_back(TensorInfo{{r.total, 3}, DType::Int64});
    return out;
  }

  void write(const StagedArgs& args, void* const* outputs) const override {
    launch_nms_write(dims_, parts_, args.workspace, static_cast<int64_t*>(outputs[0]), ctx_.stream);
  }

 private:
  static NmsInputs inputs(const StagedArgs& args) {
    NmsInputs in;
    in.boxes = static_cast<const float*>(args.in(0));
    in.scores = static_cast<const float*>(args.in(1));
    in.max_output = static_cast<const int64_t*>(args.in(2));
    in.iou_threshold = static_cast<const float*>(args.in(3));
    in.score_threshold = static_cast<const float*>(args.in(4));
    return in;
  }

  const CudaContext& ctx_;
  const std::string where_;  // the node, as the host's errors name it
  const NmsDims dims_;
  const NmsWorkspace parts_;
};

// Refuses what the host compute reports itself (UnsupportedModelError: the node runs there).
void require(const Node& node, bool ok, const std::string& what) {
  if (!ok) node_fail<UnsupportedModelError>(node, what + ": the host compute reports it");
}

StagedChoice plan_nms(const CudaContext& ctx, const Node& node, std::vector<ValueInfo> inputs) {
  const NmsAttrs attrs = nms_attrs(node);
  inputs.resize(5, ValueInfo{{}, nullptr, false});
  require(node, inputs[0].present && inputs[1].present, "boxes or scores is absent");
  const TensorInfo& boxes = inputs[0].info;
  const TensorInfo& scores = inputs[1].info;
  require(node, boxes.dtype == DType::Float32 && scores.dtype == DType::Float32, "boxes or scores is not float32");
  const Shape& bs = boxes.shape;
  const Shape& ss = scores.shape;
  require(node, bs.size() == 3 && ss.size() == 3 && bs[2] == 4 && bs[0] == ss[0] && bs[1] == ss[2],
          "boxes " + shape_str(bs) + " and scores " + shape_str(ss) + " do not agree");
  const DType scalar_types[] = {DType::Int64, DType::Float32, DType::Float32};
  for (size_t i = 2; i < 5; ++i) {
    const ValueInfo& v = inputs[i];
    require(node, !v.present || (v.info.dtype == scalar_types[i - 2] && v.info.shape.size() <= 1 && numel(v.info.shape) == 1),
            "input " + std::to_string(i) + " is not one value of its type");
  }
  NmsDims d;
  d.batches = bs[0];
  d.classes = ss[1];
  d.boxes = bs[1];
  d.center_point_box = attrs.center_point_box;
  if (d.boxes > kMaxItems || d.segments() > kMaxItems ||
      (d.boxes > 0 && d.segments() > kMaxItems / d.boxes)) {
    node_fail<UnsupportedModelError>(node, "the CUDA kernel takes at most 2^31 scores, not scores " + shape_str(ss));
  }
  StagedChoice choice;
  const NmsWorkspace parts = nms_workspace(d);
  choice.algorithm = "segmented sort + greedy in spans of 256";
  choice.workspace_bytes = parts.bytes;
  choice.kernel = std::make_unique<NmsKernel>(ctx, node.where(), d, parts);
  return choice;
}

}  // namespace

void register_cuda_nms_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add_staged("NonMaxSuppression", [&ctx](const Node& node, const std::vector<ValueInfo>& inputs) {
    return plan_nms(ctx, node, inputs);
  });
}

}  // namespace dnnx::cuda
