// HannWindow, HammingWindow, BlackmanWindow (opset 17): size (int32 or int64 scalar, known when
// planning) -> Y [size] of output_datatype, w[n] for n in [0, size) with N = size (periodic,
// the default) or size - 1 (symmetric):
//   Hann      sin^2(pi n / N)
//   Hamming   25/46 - 21/46 cos(2 pi n / N)
//   Blackman  0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// Also the shared helpers of ops/signal/signal.h.
#include "ops/const_inputs.h"
#include "ops/signal/signal.h"

namespace dnnx {

namespace {

constexpr int kWindowOpset = 17;
constexpr int64_t kOnnxFloat = 1;  // TensorProto.FLOAT

std::vector<TensorInfo> infer_window(const Node& node, const std::vector<ValueInfo>& inputs) {
  const int64_t size = scalar_int_input(node, inputs, 0, "size");
  if (size < 0) node_fail<InvalidModelError>(node, "size " + std::to_string(size) + " must not be negative");
  return {TensorInfo{{size}, signal_output_dtype(node)}};
}

}  // namespace

int64_t scalar_int_input(const Node& node, const std::vector<ValueInfo>& inputs, size_t i, const char* what) {
  const std::vector<int64_t> v = constant_ints(node, inputs, i, what);
  if (v.size() != 1 || inputs[i].info.shape.size() > 1) {
    node_fail<InvalidModelError>(node, std::string("input '") + what + "' must be a scalar, got shape " +
                                           shape_str(inputs[i].info.shape));
  }
  return v[0];
}

DType signal_output_dtype(const Node& node) {
  const int64_t t = node.attr_int("output_datatype", kOnnxFloat);
  if (t != kOnnxFloat) {
    node_fail<UnsupportedModelError>(node, "output_datatype " + std::to_string(t) +
                                               " is not supported: dnnx writes float32 (1) here");
  }
  return DType::Float32;
}

void register_window_ops(OpRegistry& r) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    OpDef def;
    def.min_opset = kWindowOpset;
    def.validate = [](const Node& node) {
      node.expect_only_attrs({"output_datatype", "periodic"});
      signal_output_dtype(node);
    };
    def.infer = infer_window;
    def.value_inputs = {0};
    r.add(op, std::move(def));
  }
}

}  // namespace dnnx
