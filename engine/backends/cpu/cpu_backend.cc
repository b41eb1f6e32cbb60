#include "backends/cpu/cpu_backend.h"

#include <cstdlib>
#include <string>

#include "backends/cpu/runtime/widened_kernel.h"
#include "backends/cpu/conv/conv_nhwc_tiles_cpu.h"

namespace dnnx {

namespace {
// Note [narrow regions] on the CPU: a channels-last region needs a conv this wide (measured in
// bench/RESULTS.md; LeNet's 1 -> 20 -> 50 channel convs keep the NCHW direct kernel, as on CUDA).
constexpr int64_t kChannelsLastMinChannels = 32;
}  // namespace

CpuBackend::CpuBackend() { register_cpu_kernels(kernels_); }

std::string CpuBackend::unsupported_reason(const Node& node) const {
  const OpDef* def = op_registry().find(node);
  if (def && def->aliases_input0) return "";  // a view: no kernel needed
  const KernelEntry* entry = kernels_.entry(node);
  return entry ? entry->refusal(node) : "the CPU backend has no kernel for " + node.op_type;
}

bool CpuBackend::channels_last() const {
  static const bool on = [] {
    const char* env = std::getenv("DNNX_CONV_NHWC");
    const std::string mode = env ? env : "";
    if (mode == "off") return false;
    return mode == "portable" || mode == "avx2" || nhwc_tiles_vectorized();  // Note [tile paths]
  }();
  return on;
}

int64_t CpuBackend::channels_last_min_channels() const {
  // DNNX_CONV_NHWC_MIN_CHANNELS overrides the rule (0: every region), read per load (tests set it).
  const char* env = std::getenv("DNNX_CONV_NHWC_MIN_CHANNELS");
  if (env && *env) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end && *end == '\0' && v >= 0) return static_cast<int64_t>(v);
  }
  return kChannelsLastMinChannels;
}

ChannelsLastForms CpuBackend::channels_last_forms() const {
  ChannelsLastForms forms;
  forms.float32_only = true;
  forms.graph_ops = true;
  forms.wide_depthwise = true;  // MobileNet's and ConvNeXt's depthwise layers gain the most
  forms.int8_convs = true;      // Note [int8 nhwc conv]
  // DNNX_PROBE_CHANNEL_CONCAT=0: Concat, Split, Slice, the channel shuffle and the means over pixels
  // keep ONNX's layout (the layout before them, for A/B probes; CUDA reads the same switch)
  const char* concat = std::getenv("DNNX_PROBE_CHANNEL_CONCAT");
  forms.channel_concat = forms.pixel_means = !(concat && std::string(concat) == "0");
  return forms;
}

namespace {

// The types every CPU kernel file handles as it says (Note [cpu dtypes] in runtime/element_type.h).
bool basic_type(DType t) {
  return t == DType::Float32 || t == DType::Int32 || t == DType::Int64 || t == DType::Bool;
}

}  // namespace

KernelChoice CpuBackend::plan_node(const Node& node, const std::vector<ValueInfo>& inputs,
                                   const std::vector<TensorInfo>& outputs) const {
  const KernelEntry* entry = kernels_.entry(node);
  if (!entry) node_fail<UnsupportedModelError>(node, unsupported_reason(node));
  // Note [cpu dtypes]: a type the entry does not list is refused, or widened to float32.
  bool widen = false;
  auto check = [&](DType t) {
    if (basic_type(t) || entry->stores(t)) return;
    if (!widenable(t)) {
      node_fail<UnsupportedModelError>(node, std::string("the CPU backend has no ") + dtype_name(t) + " kernel for " +
                                                 node.op_type);
    }
    widen = true;
  };
  for (const ValueInfo& v : inputs) {
    if (v.present) check(v.info.dtype);
  }
  for (const TensorInfo& t : outputs) check(t.dtype);
  if (widen) return plan_widened(entry->factory, entry->dtypes, node, inputs, outputs);
  return entry->factory(node, inputs, outputs);
}

}  // namespace dnnx
