// MelWeightMatrix (opset 17): num_mel_bins, dft_length (known when planning), sample_rate
// (integer scalars), lower_edge_hertz, upper_edge_hertz (float scalars) -> W [dft_length / 2 + 1,
// num_mel_bins] of output_datatype: triangular filters between num_mel_bins + 2 points evenly
// spaced on the mel scale (mel = 2595 log10(1 + hz / 700)), each point's hertz mapped to the
// spectrogram bin floor((dft_length + 1) * hz / sample_rate) (onnx's reference formulas).
#include "ops/signal/signal.h"

namespace dnnx {

namespace {

constexpr int kMelOpset = 17;

std::vector<TensorInfo> infer_mel(const Node& node, const std::vector<ValueInfo>& inputs) {
  const int64_t mel_bins = scalar_int_input(node, inputs, 0, "num_mel_bins");
  const int64_t dft_length = scalar_int_input(node, inputs, 1, "dft_length");
  if (mel_bins <= 0 || dft_length <= 0) {
    node_fail<InvalidModelError>(node, "num_mel_bins " + std::to_string(mel_bins) + " and dft_length " +
                                           std::to_string(dft_length) + " must be positive");
  }
  const TensorInfo& rate = require_input(node, inputs, 2, "sample_rate");
  if (!is_integer(rate.dtype) || numel(rate.shape) != 1) {
    node_fail<InvalidModelError>(node, "sample_rate must be an int32 or int64 scalar");
  }
  for (size_t i : {size_t{3}, size_t{4}}) {
    const char* what = i == 3 ? "lower_edge_hertz" : "upper_edge_hertz";
    const TensorInfo& t = require_input(node, inputs, i, what);
    if (t.dtype != DType::Float32 || numel(t.shape) != 1) {
      node_fail<UnsupportedModelError>(node, std::string(what) + " must be a float32 scalar");
    }
  }
  return {TensorInfo{{dft_length / 2 + 1, mel_bins}, signal_output_dtype(node)}};
}

}  // namespace

void register_mel_weight_matrix_ops(OpRegistry& r) {
  OpDef def;
  def.min_opset = kMelOpset;
  def.validate = [](const Node& node) {
    node.expect_only_attrs({"output_datatype"});
    signal_output_dtype(node);
  };
  def.infer = infer_mel;
  def.value_inputs = {0, 1};
  r.add("MelWeightMatrix", std::move(def));
}

}  // namespace dnnx
