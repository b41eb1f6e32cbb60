// The dnnx._pass_hooks extension module, for tests only (kept out of the shipped _core): the
// load-time passes that rebuild a graph (half_storage, channels_last) run on their own with a
// stand-in backend, so that their rewrites are checked where no GPU is (tests/test_half_storage.py,
// tests/test_channels_last_pass.py), and the value-shaped ops' host computes on their own
// (tests/test_value_shaped_ops.py). Built beside _core from the same static libraries, plus
// ../bind_graph.cc for graph_from_ir; tests load it with dnnx._native.load_extension("_pass_hooks").
#include <algorithm>
#include <cstring>

#include <pybind11/stl.h>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/quant/int8_gemm_cpu.h"
#include "ops/indexing/value_shaped_ops.h"
#include "bindings.h"
#include "runtime/plan_folding.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/rewrite.h"
#include "ops/layout/channels_last.h"

namespace dnnx {

namespace {

bool listed(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// The rewritten graph as Python data: nodes (name, op, inputs, outputs, Cast's "to", Transpose's
// "perm"), every value's dtype and shape (symbolic dims as 1), the constants' raw bytes, the outputs.
py::dict rewritten_graph(const Graph& graph) {
  py::list nodes;
  for (const Node& node : graph.nodes) {
    py::dict d;
    d["name"] = node.name;
    d["op"] = node.op_type;
    d["inputs"] = node.inputs;
    d["outputs"] = node.outputs;
    if (node.op_type == "Cast") d["to"] = node.attr_int("to", 1);
    d["fp32_reason"] = node.fp32_reason;
    if (node.op_type == "Transpose" || node.op_type == kTransposePadOp) d["perm"] = node.attr_ints("perm", {});
    if (node.op_type == kSpaceToDepthOp) {
      d["channels"] = node.attr_int("channels", 0);
      if (node.has_attr("to")) d["to"] = node.attr_int("to", 1);  // Note [entry cast]
    }
    if (node.op_type.rfind("Conv", 0) == 0) {
      d["kernel_shape"] = node.attr_ints("kernel_shape", {});
      d["strides"] = node.attr_ints("strides", {});
    }
    if ((node.op_type == "Pad" || node.op_type == kTransposePadOp || node.op_type == kSpaceToDepthOp) &&
        node.has_attr("pads")) {
      d["pads"] = node.attr_ints("pads", {});
      d["mode"] = node.attr_string("mode", "constant");
    }
    nodes.append(d);
  }
  py::dict types, shapes;
  for (const auto& kv : value_types(graph)) {
    types[py::str(kv.first)] = dtype_name(kv.second.dtype);
    shapes[py::str(kv.first)] = kv.second.shape;
  }
  py::dict constants;
  for (const auto& kv : graph.constants) {
    constants[py::str(kv.first)] = py::bytes(reinterpret_cast<const char*>(kv.second->data.data()),
                                             kv.second->data.size());
  }
  py::dict out;
  out["nodes"] = nodes;
  out["types"] = types;
  out["shapes"] = shapes;
  out["constants"] = constants;
  out["outputs"] = graph.outputs;
  return out;
}

// A Python attribute value (int, float, str, or a list of ints, floats or strs) as an Attribute.
Attribute attribute_from_python(const std::string& name, const py::handle& value) {
  if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) return value.cast<int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<float>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    const py::sequence items = py::reinterpret_borrow<py::sequence>(value);
    if (items.size() > 0 && py::isinstance<py::str>(items[0])) return items.cast<std::vector<std::string>>();
    if (items.size() > 0 && py::isinstance<py::float_>(items[0])) return items.cast<std::vector<float>>();
    return items.cast<std::vector<int64_t>>();
  }
  throw InputError("attribute '" + name + "': expected an int, float, str or a list of them");
}

ConstTensor tensor_from_numpy(const py::array& source, const std::string& what) {
  auto array = py::array::ensure(source, py::array::c_style);
  if (!array) throw InputError(what + ": expected an array");
  ConstTensor t;
  t.info.dtype = dtype_from_numpy(array.dtype(), what);
  for (py::ssize_t d = 0; d < array.ndim(); ++d) t.info.shape.push_back(array.shape(d));
  t.data.resize(t.info.bytes());
  if (!t.data.empty()) std::memcpy(t.data.data(), array.data(), t.data.size());
  return t;
}

py::array numpy_from_tensor(const ConstTensor& t) {
  py::array out(numpy_dtype(t.info.dtype), std::vector<py::ssize_t>(t.info.shape.begin(), t.info.shape.end()));
  if (!t.data.empty()) std::memcpy(out.mutable_data(), t.data.data(), t.data.size());
  return out;
}

}  // namespace

PYBIND11_MODULE(_pass_hooks, m) {
  m.doc() = "For tests only: dnnx's half_storage and channels_last passes run on their own (not part of the API).";
  set_folding_host(std::make_shared<CpuBackend>());  // as _core does: half_storage keeps what folds in float32
  m.def(
      "half_storage_rewrite",
      [](const py::dict& ir, const std::vector<std::string>& half_ops, bool fp16_range, const py::dict& calibration,
         const std::string& half) {
        // The half_storage pass on its own, with a backend stand-in that has `half` kernels
        // ("float16" or "bfloat16") for exactly `half_ops`: lets the rewrite be checked where no
        // GPU is. fp16_range: with the range check the engine runs first (half_range.h), from the
        // weights and `calibration` ({value: (mean, mean square, max |value|)}).
        if (half != "float16" && half != "bfloat16") throw InputError("half: expected 'float16' or 'bfloat16'");
        const DType type = half == "bfloat16" ? DType::BFloat16 : DType::Float16;
        Graph graph = graph_from_ir(ir);
        HalfCalibration measured;
        for (auto item : calibration) {
          const auto s = item.second.cast<std::tuple<double, double, double>>();
          measured[item.first.cast<std::string>()] = MeasuredValue{std::get<0>(s), std::get<1>(s), std::get<2>(s)};
        }
        const auto keep = fp16_range ? half_range_reasons(graph, measured) : std::map<std::string, std::string>{};
        const int in_half = half_storage(graph, type, [&half_ops, &half](const Node& node) {
          return listed(half_ops, node.op_type) ? std::string() : "no " + half + " kernel for " + node.op_type;
        }, keep);
        py::dict out = rewritten_graph(graph);
        out["in_half"] = in_half;
        return out;
      },
      py::arg("ir"), py::arg("half_ops"), py::arg("fp16_range") = false, py::arg("calibration") = py::dict(),
      py::arg("half") = "float16",
      "The half_storage pass (precision='fp16', or 'bf16' with half='bfloat16') on `ir` for a backend "
      "with half kernels for `half_ops` (after the range check when fp16_range): {'in_half', 'nodes' "
      "(with 'fp32_reason'), 'types', 'shapes', 'constants' (raw bytes), 'outputs'}.");
  m.def(
      "channels_last_rewrite",
      [](const py::dict& ir, const std::vector<std::string>& nhwc_ops, int64_t min_channels, int64_t channel_multiple,
         const std::string& half) {
        if (!half.empty() && half != "float16" && half != "bfloat16") {
          throw InputError("half: expected '', 'float16' or 'bfloat16'");
        }
        // The channels_last pass on its own, for a backend stand-in with "<op>@NHWC" kernels for
        // exactly `nhwc_ops` (base names, e.g. "Conv+Relu").
        Graph graph = graph_from_ir(ir);
        const int converted = channels_last(graph, [&nhwc_ops](const Node& node) {
          return listed(nhwc_ops, channels_first_op(node.op_type));
        }, min_channels, channel_multiple);
        int folded_casts = 0;
        if (!half.empty()) {  // then half storage and the entry-Cast fold, in the engine's order
          const DType type = half == "bfloat16" ? DType::BFloat16 : DType::Float16;
          half_storage(graph, type, [](const Node&) { return std::string(); });
          folded_casts = fold_entry_cast(graph, PassOptions{});
        }
        py::dict out = rewritten_graph(graph);
        out["converted"] = converted;
        out["folded_casts"] = folded_casts;
        py::dict reasons;
        for (const Node& node : graph.nodes) {
          if (!node.layout_reason.empty()) reasons[py::str(node.name)] = node.layout_reason;
        }
        out["layout_reasons"] = reasons;
        return out;
      },
      py::arg("ir"), py::arg("nhwc_ops"), py::arg("min_channels") = 0, py::arg("channel_multiple") = 1,
      py::arg("half") = "",
      "The channels_last pass on `ir` for a backend with channels-last kernels for `nhwc_ops` "
      "(regions kept where a conv has min_channels, Note [narrow regions]; conv input channels "
      "padded to channel_multiple, Note [padded channels]); with half ('float16' or 'bfloat16') "
      "then half storage (every node with a half kernel) and the entry-Cast fold (Note [entry cast]): "
      "{'converted', 'folded_casts', 'nodes', 'types', 'shapes', 'constants' (raw bytes), 'outputs', "
      "'layout_reasons'}.");
  m.def(
      "run_value_shaped",
      [](const std::string& op_type, const py::dict& attrs, const py::list& inputs, int opset) {
        // The host compute of a value-shaped op (Note [value-shaped compute]) on its own, as a
        // staged plan will call it: a node "under_test" of op_type with attrs, inputs (arrays, or
        // None for an omitted optional input) -> one array per output the op defines.
        const ValueShapedCompute compute = find_value_shaped_compute(op_type);
        if (!compute) throw InputError("op_type: " + op_type + " has no value-shaped compute");
        Node node;
        node.op_type = op_type;
        node.name = "under_test";
        node.opset = opset;
        for (auto item : attrs) {
          const std::string key = item.first.cast<std::string>();
          node.attrs[key] = attribute_from_python(key, item.second);
        }
        std::vector<ConstTensor> tensors(inputs.size());
        ValueShapedInputs given(inputs.size(), nullptr);
        for (size_t i = 0; i < inputs.size(); ++i) {
          node.inputs.push_back(inputs[i].is_none() ? "" : "in" + std::to_string(i));
          if (inputs[i].is_none()) continue;
          tensors[i] = tensor_from_numpy(inputs[i].cast<py::array>(), "input " + std::to_string(i));
          given[i] = &tensors[i];
        }
        std::vector<ConstTensor> outputs;
        {
          py::gil_scoped_release release;
          outputs = compute(node, given);
        }
        py::list out;
        for (const ConstTensor& t : outputs) out.append(numpy_from_tensor(t));
        return out;
      },
      py::arg("op_type"), py::arg("attrs"), py::arg("inputs"), py::arg("opset") = 11,
      "The host compute of NonMaxSuppression or Unique on `inputs` (arrays, None for an omitted "
      "optional input): one array per output the op defines.");
  m.def(
      "int8_gemm",
      [](py::array w, int w_zp, py::array b, int b_zp, const std::string& path) {
        // C [M, N] int32 = (W [M, K] - w_zp) x (B [K, N] - b_zp) by the int8 GEMM of the fused
        // QDQ layers (Note [int8 gemm paths]) on the path asked for ("vnni", "avx-vnni", "avx2", "portable").
        auto wa = py::array::ensure(w, py::array::c_style), ba = py::array::ensure(b, py::array::c_style);
        const bool w_signed = wa.dtype().kind() == 'i', b_signed = ba.dtype().kind() == 'i';
        if (wa.ndim() != 2 || ba.ndim() != 2 || wa.itemsize() != 1 || ba.itemsize() != 1 || wa.shape(1) != ba.shape(0)) {
          throw InputError("int8_gemm: W [M, K] and B [K, N], both int8 or uint8");
        }
        const Int8Path want = path == "amx"        ? Int8Path::Amx
                              : path == "vnni"     ? Int8Path::Vnni
                              : path == "avx-vnni" ? Int8Path::AvxVnni
                              : path == "avx2"     ? Int8Path::Avx2
                                                   : Int8Path::Portable;
        const int64_t m_ = wa.shape(0), k = wa.shape(1), n = ba.shape(1);
        const int8_t zp8 = static_cast<int8_t>(w_zp);
        Int8Weights packed = pack_int8_weights(wa.data(), w_signed, m_, k, k, 1, &zp8, false, want);
        if (packed.path != want) throw InputError(std::string("int8_gemm: this CPU or these weights take ") + int8_path_name(packed.path));
        std::vector<uint8_t> scratch(int8_gemm_scratch_bytes(packed, n) + 64);
        py::array_t<int32_t> c({m_, n});
        int8_gemm(packed, ba.data(), b_signed, b_zp, n, n, 1, c.mutable_data(), scratch.data(), 1);
        return c;
      },
      py::arg("w"), py::arg("w_zero_point"), py::arg("b"), py::arg("b_zero_point"), py::arg("path"),
      "The fused QDQ layers' int8 GEMM on one path: (W - w_zp) x (B - b_zp) as int32.");
}

}  // namespace dnnx
