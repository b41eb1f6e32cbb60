// Which nodes of a precision="fp16" model stay float32 because their values leave fp16's range
// (Note [fp16 range] in half_range.cc): decided at load, before the half_storage pass, from the
// weights and, when the caller gave one, a calibration batch's measured values.
#pragma once
#include <map>
#include <string>

#include "ir/graph.h"

namespace dnnx {

// One value as a calibration batch saw it (python/dnnx/_calibration.py, float32 CPU run): its
// mean, mean square and largest |value|.
struct MeasuredValue {
  double mean = 0;
  double square = 0;
  double peak = 0;
};
using HalfCalibration = std::map<std::string, MeasuredValue>;  // value name -> what was measured

// node name -> "kept in fp32: activations up to 9.5e+09 (estimated from the weights) exceed
// fp16's range (65504)" for every node that reads or writes a value (or a weight) that may pass
// 65504. Values in `calibration` take their measured range; the others are estimated from the
// graph inputs (taken as values in [0, 1] unless calibrated) through the layers.
std::map<std::string, std::string> half_range_reasons(const Graph& graph, const HalfCalibration& calibration = {});

}  // namespace dnnx
