// Einsum on CUDA as transposes and one batched GEMM (cuBLAS, blas.h), for the equations that
// reduce to that form (Note [einsum gemm form]); every other equation, and the integer types,
// run on the host (the CPU's Note [einsum program] covers them all). The transformer forms
// "bhid,bhjd->bhij", "bhij,bhjd->bhid", "bij,bjk->bik", "bid,jd->bij" and the transposes
// "...ij->...ji" take this path.
//
// Note [einsum gemm form]: one operand whose labels the output keeps, each once (a transpose or
// a copy), or two operands A and B with no label repeated within one and every label either
// kept by the output or carried by both: then each label is
//   batch  in A, in B and in the output      M  in A only        N  in B only
//   K      in A and in B, not in the output
// A is laid out [batch, M, K] (or read as its transpose [batch, K, M]), B [batch, K, N] (or
// [batch, N, K]), in place where the operand already is in one of these orders, else gathered
// into the workspace in the one that keeps its innermost dim innermost (a size-1 dim broadcast to
// a larger batch reads stride 0); one strided-batched GEMM
// gives C [batch, M, N], written straight into the output when its labels are in that order,
// else gathered into it. Batch and M/N labels are ordered as the output orders them, K labels
// as A holds them.
#include <algorithm>
#include <cctype>
#include <climits>

#include "backends/cuda/backend/simple_kernel.h"
#include "backends/cuda/dense/blas.h"
#include "backends/cuda/layout/glue_kernels.h"
#include "ops/dense/einsum.h"

namespace dnnx::cuda {

namespace {

bool has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string label_name(int label) {
  return label >= kEllipsisLabel ? std::string("...") : std::string(1, static_cast<char>(label));
}

// Why the labels do not have Note [einsum gemm form] ("" when they do).
std::string gemm_form_refusal(const std::vector<std::vector<int>>& inputs, const std::vector<int>& output) {
  if (inputs.size() > 2) {
    return "an Einsum of " + std::to_string(inputs.size()) + " operands (the CUDA kernel takes one or two)";
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int>& labels = inputs[i];
    for (size_t d = 0; d < labels.size(); ++d) {
      if (std::count(labels.begin(), labels.end(), labels[d]) > 1) {
        return "operand " + std::to_string(i) + " repeats label '" + label_name(labels[d]) +
               "' (a diagonal; the CUDA kernel takes transposes and one batched GEMM)";
      }
      const bool other = inputs.size() == 2 && has(inputs[1 - i], labels[d]);
      if (!has(output, labels[d]) && !other) {
        return "label '" + label_name(labels[d]) + "' of operand " + std::to_string(i) +
               " is summed over that operand alone (the CUDA kernel takes transposes and one batched GEMM)";
      }
    }
  }
  return "";
}

// The equation's labels from its text alone (the ellipsis one label), for the load-time check;
// `ok` false when the text is malformed (the op's own checks then report it).
struct EquationLabels {
  bool ok = false;
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

std::vector<int> term_labels(const std::string& term, bool& ok) {
  std::vector<int> labels;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (term.compare(i, 3, "...") != 0) ok = false;
      labels.push_back(kEllipsisLabel);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(term[i]))) {
      labels.push_back(term[i]);
    } else {
      ok = false;
    }
  }
  return labels;
}

EquationLabels equation_labels(const std::string& text) {
  std::string eq;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  }
  EquationLabels e;
  e.ok = true;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  for (;;) {
    const size_t comma = lhs.find(',', start);
    e.inputs.push_back(term_labels(lhs.substr(start, comma - start), e.ok));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    e.output = term_labels(eq.substr(arrow + 2), e.ok);
    return e;
  }
  // Implicit output: the ellipsis, then the letters used once, in ASCII order.
  std::vector<int> all;
  for (const auto& t : e.inputs) all.insert(all.end(), t.begin(), t.end());
  if (has(all, kEllipsisLabel)) e.output.push_back(kEllipsisLabel);
  std::vector<int> once;
  for (int l : all) {
    if (l != kEllipsisLabel && std::count(all.begin(), all.end(), l) == 1) once.push_back(l);
  }
  std::sort(once.begin(), once.end());
  e.output.insert(e.output.end(), once.begin(), once.end());
  return e;
}

std::string einsum_refusal(const Node& node) {
  const EquationLabels e = equation_labels(node.attr_string("equation", ""));
  return e.ok ? gemm_form_refusal(e.inputs, e.output) : "";
}

// One operand seen per label: its size and element stride (0 along a broadcast size-1 dim).
struct LabelView {
  std::vector<int> labels;
  std::vector<int64_t> strides;
  int64_t stride(int label) const { return strides[std::find(labels.begin(), labels.end(), label) - labels.begin()]; }
};

LabelView label_view(const std::vector<int>& labels, const Shape& shape, const std::map<int, int64_t>& sizes) {
  LabelView v;
  v.labels = labels;
  const std::vector<int64_t> st = packed_strides(shape);
  for (size_t d = 0; d < labels.size(); ++d) v.strides.push_back(shape[d] == 1 && sizes.at(labels[d]) != 1 ? 0 : st[d]);
  return v;
}

// Whether reading `v` in label order `order` is reading its memory front to back.
bool in_order(const LabelView& v, const std::vector<int>& order, const std::map<int, int64_t>& sizes) {
  int64_t step = 1;
  for (size_t d = order.size(); d-- > 0;) {
    const int64_t size = sizes.at(order[d]);
    if (size != 1 && v.stride(order[d]) != step) return false;
    step *= size;
  }
  return true;
}

// The gather reading `v` in label order `order` (size-1 dims dropped, neighbours merged).
BroadcastDims gather_dims(const Node& node, const LabelView& v, const std::vector<int>& order,
                          const std::map<int, int64_t>& sizes) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, stride)
  for (int l : order) {
    const int64_t size = sizes.at(l), stride = v.stride(l);
    if (size == 1) continue;
    if (!dims.empty() && dims.back().second == stride * size) {
      dims.back().first *= size;
      dims.back().second = stride;
    } else {
      dims.emplace_back(size, stride);
    }
  }
  if (dims.size() > static_cast<size_t>(kMaxGlueDims)) {
    node_fail<UnsupportedModelError>(node, "an Einsum layout of more than " + std::to_string(kMaxGlueDims) +
                                               " dims after merging");
  }
  BroadcastDims out;
  out.rank = static_cast<int>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    out.size[d] = dims[d].first;
    out.stride_a[d] = dims[d].second;
  }
  return out;
}

std::vector<int> concat(std::vector<int> a, const std::vector<int>& b, const std::vector<int>& c = {}) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

int64_t product(const std::vector<int>& labels, const std::map<int, int64_t>& sizes) {
  int64_t p = 1;
  for (int l : labels) p *= sizes.at(l);
  return p;
}

// Where a GEMM operand comes from: read in place, or gathered into the workspace at `offset`
// bytes (rank > 0 of `dims`; rank 0 with gather set: a plain copy of `elements`).
struct OperandPlan {
  bool gather = false;
  BroadcastDims dims;
  int64_t elements = 0;
  size_t offset = 0;
};

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(const CudaContext& ctx, size_t inputs, OperandPlan a, OperandPlan b, GemmCall call, OperandPlan out,
               size_t c_offset)
      : ctx_(ctx), inputs_(inputs), a_(a), b_(b), call_(call), out_(out), c_offset_(c_offset) {}

  void run(const KernelArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    const size_t elem = dtype_size(call_.dtype);
    if (inputs_ == 1) {  // a transpose or a copy
      place(a_, args.in<void>(0), args.out<void>(0), elem);
      return;
    }
    const void* a = a_.gather ? place(a_, args.in<void>(0), ws + a_.offset, elem) : args.in<void>(0);
    const void* b = b_.gather ? place(b_, args.in<void>(1), ws + b_.offset, elem) : args.in<void>(1);
    void* c = out_.gather ? static_cast<void*>(ws + c_offset_) : args.out<void>(0);
    if (call_.k == 0) {
      check(cudaMemsetAsync(c, 0, static_cast<size_t>(call_.batch) * call_.m * call_.n * elem, ctx_.stream),
            "cudaMemsetAsync");
    } else {
      row_major_gemm(ctx_, call_, a, b, c);
    }
    if (out_.gather) place(out_, c, args.out<void>(0), elem);
  }

 private:
  const void* place(const OperandPlan& p, const void* from, void* to, size_t elem) const {
    if (p.elements == 0) return to;
    if (p.dims.rank <= 1 && (p.dims.rank == 0 || p.dims.stride_a[0] == 1)) {
      check(cudaMemcpyAsync(to, from, static_cast<size_t>(p.elements) * elem, cudaMemcpyDeviceToDevice, ctx_.stream),
            "cudaMemcpyAsync");
    } else {
      launch_gather(from, to, elem, p.elements, p.dims, ctx_.stream);
    }
    return to;
  }

  const CudaContext& ctx_;
  size_t inputs_;
  OperandPlan a_, b_;
  GemmCall call_;
  OperandPlan out_;
  size_t c_offset_;
};

int to_int(const Node& node, int64_t v, const char* what) {
  if (v > INT_MAX) {
    node_fail<UnsupportedModelError>(node, std::string("Einsum's GEMM ") + what + " " + std::to_string(v) +
                                               " exceeds cuBLAS's 2^31-1");
  }
  return static_cast<int>(v);
}

KernelChoice plan_einsum(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) {
  const DType dtype = inputs[0].info.dtype;
  require_cuda_floating(node, inputs[0].info, dtype, "inputs");
  std::vector<Shape> shapes;
  for (const ValueInfo& v : inputs) {
    require_cuda_floating(node, v.info, dtype, "inputs");
    shapes.push_back(v.info.shape);
  }
  const EinsumEquation eq = parse_einsum(node, shapes);
  const std::string why = gemm_form_refusal(eq.inputs, eq.output);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  const size_t elem = dtype_size(dtype);
  const int64_t out_elements = numel(outputs[0].shape);
  KernelChoice choice;
  const LabelView a_view = label_view(eq.inputs[0], shapes[0], eq.sizes);
  if (inputs.size() == 1) {
    OperandPlan t;
    t.gather = true;
    t.elements = out_elements;
    t.dims = gather_dims(node, a_view, eq.output, eq.sizes);
    choice.algorithm = in_order(a_view, eq.output, eq.sizes) ? "copy" : "gather kernel (transpose)";
    GemmCall element;  // no GEMM: only its element type is read
    element.dtype = dtype;
    choice.kernel = std::make_unique<EinsumKernel>(ctx, 1, t, OperandPlan{}, element, OperandPlan{}, 0);
    return choice;
  }
  const LabelView b_view = label_view(eq.inputs[1], shapes[1], eq.sizes);
  std::vector<int> batch, m, n, k;
  for (int l : eq.output) {
    const bool in_a = has(eq.inputs[0], l), in_b = has(eq.inputs[1], l);
    (in_a && in_b ? batch : in_a ? m : n).push_back(l);
  }
  for (int l : eq.inputs[0]) {
    if (!has(eq.output, l)) k.push_back(l);  // in B too (gemm_form_refusal)
  }
  GemmCall call;
  call.dtype = dtype;
  call.batch = to_int(node, product(batch, eq.sizes), "batch");
  call.m = to_int(node, product(m, eq.sizes), "M");
  call.n = to_int(node, product(n, eq.sizes), "N");
  call.k = to_int(node, product(k, eq.sizes), "K");
  call.stride_a = int64_t{call.m} * call.k;
  call.stride_b = int64_t{call.k} * call.n;
  call.stride_y = int64_t{call.m} * call.n;
  size_t workspace = 0;
  std::string steps;
  // An operand in place (as is, or as its transpose), else gathered in the first order.
  const auto operand = [&](const LabelView& v, const std::vector<int>& order, const std::vector<int>& flipped,
                           bool& trans, const char* name) {
    OperandPlan p;
    if (in_order(v, order, eq.sizes)) return p;
    if (in_order(v, flipped, eq.sizes)) {
      trans = true;
      return p;
    }
    // Gathered in the order whose innermost label the operand holds innermost (its reads then
    // coalesce), cuBLAS transposing the result when that is the flipped order.
    const int inner = v.labels.empty() ? -1 : v.labels.back();
    const bool flip = !flipped.empty() && flipped.back() == inner && (order.empty() || order.back() != inner);
    trans = flip;
    p.gather = true;
    p.elements = product(order, eq.sizes);
    p.dims = gather_dims(node, v, flip ? flipped : order, eq.sizes);
    p.offset = workspace;
    workspace += (static_cast<size_t>(p.elements) * elem + 255) / 256 * 256;
    steps += std::string("gather ") + name + "+";
    return p;
  };
  const OperandPlan a = operand(a_view, concat(batch, m, k), concat(batch, k, m), call.trans_a, "A");
  const OperandPlan b = operand(b_view, concat(batch, k, n), concat(batch, n, k), call.trans_b, "B");
  // C [batch, M, N] into the output's label order.
  LabelView c_view;
  c_view.labels = concat(batch, m, n);
  Shape c_shape;
  for (int l : c_view.labels) c_shape.push_back(eq.sizes.at(l));
  c_view.strides = packed_strides(c_shape);
  OperandPlan out;
  size_t c_offset = 0;
  if (!in_order(c_view, eq.output, eq.sizes)) {
    out.gather = true;
    out.elements = out_elements;
    out.dims = gather_dims(node, c_view, eq.output, eq.sizes);
    c_offset = workspace;
    workspace += static_cast<size_t>(out_elements) * elem;
  }
  const char* gemm = call.batch == 1 ? (call.half() ? "cublasGemmEx" : "cublasSgemm")
                                     : (call.half() ? "cublasGemmStridedBatchedEx" : "cublasSgemmStridedBatched");
  choice.algorithm = steps + gemm +
                     (call.trans_a || call.trans_b ? std::string(" (") + (call.trans_a ? "A^T" : "A") + ", " +
                                                         (call.trans_b ? "B^T" : "B") + ")"
                                                   : std::string()) +
                     (out.gather ? "+gather out" : "");
  choice.math = blas_math_name(ctx, dtype);
  choice.workspace_bytes = workspace;
  choice.kernel = std::make_unique<EinsumKernel>(ctx, 2, a, b, call, out, c_offset);
  return choice;
}

}  // namespace

void register_cuda_einsum_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Einsum", bind(ctx, plan_einsum)).with_dtypes(kFloatAndHalves).refusing(einsum_refusal);
}

}  // namespace dnnx::cuda
