// Einsum on CUDA as transposes and one batched GEMM (cuBLAS, blas.h), for the equations that
// reduce to that form (Note [einsum gemm form]); every other equation, and the integer types,
// run on the host (the CPU's Note [einsum program] covers them all). The transformer forms
// "bhid,bhjd->bhij", "bhij,bhjd->bhid", "bij,bjk->bik", "bid,jd->bij" and the transposes
// "...ij->...ji" take this path. Its gradient (float32) beside it: one GEMM per operand.
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
#include "backends/cuda/layout/gather_dims.h"
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

// The gather reading `v` in label order `order` (size-1 dims dropped, neighbours merged: gather_dims.h).
BroadcastDims gather_dims(const Node& node, const LabelView& v, const std::vector<int>& order,
                          const std::map<int, int64_t>& sizes) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (size, stride)
  for (int l : order) dims.emplace_back(sizes.at(l), v.stride(l));
  return merged_gather_dims(node, dims, "an Einsum layout");
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

// Note [einsum gemm form] for one node: the labels' roles, the GEMM, and where its operands and
// result go (workspace offsets in bytes).
struct EinsumForm {
  EinsumEquation eq;
  size_t operands = 0;
  LabelView a_view, b_view, c_view;  // c_view: C [batch, M, N], contiguous
  std::vector<int> batch, m, n, k;
  GemmCall call;
  OperandPlan a, b, out;  // one operand: `a` is the whole transpose (into the output)
  size_t c_offset = 0, workspace = 0;
  std::string steps;
};

EinsumForm einsum_form(const Node& node, const std::vector<ValueInfo>& inputs, const Shape& out_shape, DType dtype) {
  EinsumForm f;
  std::vector<Shape> shapes;
  for (const ValueInfo& v : inputs) shapes.push_back(v.info.shape);
  f.eq = parse_einsum(node, shapes);
  const std::string why = gemm_form_refusal(f.eq.inputs, f.eq.output);
  if (!why.empty()) node_fail<UnsupportedModelError>(node, why);
  const std::map<int, int64_t>& sizes = f.eq.sizes;
  const size_t elem = dtype_size(dtype);
  const int64_t out_elements = numel(out_shape);
  f.operands = inputs.size();
  f.call.dtype = dtype;
  f.a_view = label_view(f.eq.inputs[0], shapes[0], sizes);
  if (f.operands == 1) {
    f.a.gather = true;
    f.a.elements = out_elements;
    f.a.dims = gather_dims(node, f.a_view, f.eq.output, sizes);
    f.steps = in_order(f.a_view, f.eq.output, sizes) ? "copy" : "gather kernel (transpose)";
    return f;
  }
  f.b_view = label_view(f.eq.inputs[1], shapes[1], sizes);
  for (int l : f.eq.output) {
    const bool in_a = has(f.eq.inputs[0], l), in_b = has(f.eq.inputs[1], l);
    (in_a && in_b ? f.batch : in_a ? f.m : f.n).push_back(l);
  }
  for (int l : f.eq.inputs[0]) {
    if (!has(f.eq.output, l)) f.k.push_back(l);  // in B too (gemm_form_refusal)
  }
  GemmCall& call = f.call;
  call.batch = to_int(node, product(f.batch, sizes), "batch");
  call.m = to_int(node, product(f.m, sizes), "M");
  call.n = to_int(node, product(f.n, sizes), "N");
  call.k = to_int(node, product(f.k, sizes), "K");
  call.stride_a = int64_t{call.m} * call.k;
  call.stride_b = int64_t{call.k} * call.n;
  call.stride_y = int64_t{call.m} * call.n;
  // An operand in place (as is, or as its transpose), else gathered.
  const auto operand = [&](const LabelView& v, const std::vector<int>& order, const std::vector<int>& flipped,
                           bool& trans, const char* name) {
    OperandPlan p;
    if (in_order(v, order, sizes)) return p;
    if (in_order(v, flipped, sizes)) {
      trans = true;
      return p;
    }
    // Gathered in the order whose innermost label the operand holds innermost (its reads then
    // coalesce), cuBLAS transposing the result when that is the flipped order.
    const int inner = v.labels.empty() ? -1 : v.labels.back();
    const bool flip = !flipped.empty() && flipped.back() == inner && (order.empty() || order.back() != inner);
    trans = flip;
    p.gather = true;
    p.elements = product(order, sizes);
    p.dims = gather_dims(node, v, flip ? flipped : order, sizes);
    p.offset = f.workspace;
    f.workspace += (static_cast<size_t>(p.elements) * elem + 255) / 256 * 256;
    f.steps += std::string("gather ") + name + "+";
    return p;
  };
  f.a = operand(f.a_view, concat(f.batch, f.m, f.k), concat(f.batch, f.k, f.m), call.trans_a, "A");
  f.b = operand(f.b_view, concat(f.batch, f.k, f.n), concat(f.batch, f.n, f.k), call.trans_b, "B");
  f.c_view.labels = concat(f.batch, f.m, f.n);
  Shape c_shape;
  for (int l : f.c_view.labels) c_shape.push_back(sizes.at(l));
  f.c_view.strides = packed_strides(c_shape);
  if (!in_order(f.c_view, f.eq.output, sizes)) {  // C into the output's label order
    f.out.gather = true;
    f.out.elements = out_elements;
    f.out.dims = gather_dims(node, f.c_view, f.eq.output, sizes);
    f.c_offset = f.workspace;
    f.workspace += (static_cast<size_t>(out_elements) * elem + 255) / 256 * 256;
  }
  const char* gemm = call.batch == 1 ? (call.half() ? "cublasGemmEx" : "cublasSgemm")
                                     : (call.half() ? "cublasGemmStridedBatchedEx" : "cublasSgemmStridedBatched");
  f.steps += gemm;
  if (call.trans_a || call.trans_b) {
    f.steps += std::string(" (") + (call.trans_a ? "A^T" : "A") + ", " + (call.trans_b ? "B^T" : "B") + ")";
  }
  if (f.out.gather) f.steps += "+gather out";
  return f;
}

KernelChoice plan_einsum(const CudaContext& ctx, const Node& node, const std::vector<ValueInfo>& inputs,
                         const std::vector<TensorInfo>& outputs) {
  const DType dtype = inputs[0].info.dtype;
  for (const ValueInfo& v : inputs) require_cuda_floating(node, v.info, dtype, "inputs");
  const EinsumForm f = einsum_form(node, inputs, outputs[0].shape, dtype);
  KernelChoice choice;
  choice.algorithm = f.steps;
  choice.workspace_bytes = f.workspace;
  if (f.operands == 2) choice.math = blas_math_name(ctx, dtype);
  choice.kernel = std::make_unique<EinsumKernel>(ctx, f.operands, f.a, f.b, f.call, f.out, f.c_offset);
  return choice;
}

// --- gradient (float32) --------------------------------------------------------------------------
// One operand: dX = dY gathered into X's label order. Two: dC = dY in C's order [batch, M, N]
// (gathered unless it already is), then dA [batch, M, K] = dC op(B)^T and dB [batch, K, N] =
// op(A)^T dC, each one strided-batched SGEMM over the operands as the forward reads them (the
// transpose flags flipped), gathered into the operand's own label order unless it already is
// that order. An operand broadcast along a label (a size-1 dim against a larger size) would need
// its gradient summed: refused (UnsupportedModelError at finetune()).

// The gather that lays a contiguous buffer over `from` (labels in order) out in order `to`.
BroadcastDims relayout(const Node& node, const std::vector<int>& from, const std::vector<int>& to,
                       const std::map<int, int64_t>& sizes) {
  LabelView v;
  v.labels = from;
  Shape shape;
  for (int l : from) shape.push_back(sizes.at(l));
  v.strides = packed_strides(shape);
  return gather_dims(node, v, to, sizes);
}

bool same_order(const std::vector<int>& from, const std::vector<int>& to, const std::map<int, int64_t>& sizes) {
  LabelView v;
  v.labels = from;
  Shape shape;
  for (int l : from) shape.push_back(sizes.at(l));
  v.strides = packed_strides(shape);
  return in_order(v, to, sizes);
}

// Where one operand's gradient goes: straight into d_input (`direct`), or through the workspace
// at `offset` and a gather.
struct GradOut {
  bool direct = true;
  BroadcastDims dims;
  int64_t elements = 0;
  size_t offset = 0;
};

class EinsumGradKernel final : public GradKernel {
 public:
  EinsumGradKernel(const CudaContext& ctx, EinsumForm f, OperandPlan dc, size_t dc_offset, GradOut da, GradOut db)
      : ctx_(ctx), f_(std::move(f)), dc_(dc), dc_offset_(dc_offset), da_(da), db_(db) {}

  void run(const GradArgs& args) const override {
    auto* ws = static_cast<uint8_t*>(args.workspace);
    const float* dy = args.d_outputs[0];
    float *da = args.d_inputs[0], *db = f_.operands == 2 ? args.d_inputs[1] : nullptr;
    if (f_.operands == 1) {
      if (da) move(dy, da, da_.dims, da_.elements);
      return;
    }
    const float* dc = dy;
    if (dc_.gather) {
      move(dy, ws + dc_offset_, dc_.dims, dc_.elements);
      dc = reinterpret_cast<const float*>(ws + dc_offset_);
    }
    const GemmCall& c = f_.call;
    if (da) {
      const void* b = args.inputs[1];
      if (f_.b.gather) {
        move(b, ws + f_.b.offset, f_.b.dims, f_.b.elements);
        b = ws + f_.b.offset;
      }
      GemmCall g;  // dA [M, K] = dC [M, N] op(B)^T
      g.trans_b = !c.trans_b;
      g.m = c.m;
      g.n = c.k;
      g.k = c.n;
      g.batch = c.batch;
      g.stride_a = c.stride_y;
      g.stride_b = c.stride_b;
      g.stride_y = c.stride_a;
      product_into(g, dc, b, da, da_, ws);
    }
    if (db) {
      const void* a = args.inputs[0];
      if (f_.a.gather) {
        move(a, ws + f_.a.offset, f_.a.dims, f_.a.elements);
        a = ws + f_.a.offset;
      }
      GemmCall g;  // dB [K, N] = op(A)^T [K, M] dC [M, N]
      g.trans_a = !c.trans_a;
      g.m = c.k;
      g.n = c.n;
      g.k = c.m;
      g.batch = c.batch;
      g.stride_a = c.stride_a;
      g.stride_b = c.stride_y;
      g.stride_y = c.stride_b;
      product_into(g, a, dc, db, db_, ws);
    }
  }

 private:
  void move(const void* from, void* to, const BroadcastDims& dims, int64_t elements) const {
    if (elements == 0) return;
    if (dims.rank <= 1 && (dims.rank == 0 || dims.stride_a[0] == 1)) {
      check(cudaMemcpyAsync(to, from, static_cast<size_t>(elements) * sizeof(float), cudaMemcpyDeviceToDevice,
                            ctx_.stream),
            "cudaMemcpyAsync");
    } else {
      launch_gather(from, to, sizeof(float), elements, dims, ctx_.stream);
    }
  }

  // y = the GEMM's result in the operand's layout (through the workspace when it differs).
  void product_into(const GemmCall& g, const void* a, const void* b, float* d, const GradOut& o, uint8_t* ws) const {
    void* y = o.direct ? static_cast<void*>(d) : static_cast<void*>(ws + o.offset);
    if (g.k == 0) {
      check(cudaMemsetAsync(y, 0, static_cast<size_t>(g.batch) * g.m * g.n * sizeof(float), ctx_.stream),
            "cudaMemsetAsync");
    } else {
      row_major_gemm(ctx_, g, a, b, y);
    }
    if (!o.direct) move(y, d, o.dims, o.elements);
  }

  const CudaContext& ctx_;
  EinsumForm f_;
  OperandPlan dc_;
  size_t dc_offset_;
  GradOut da_, db_;
};

GradChoice plan_einsum_grad(const GradRequest& r) {
  for (const ValueInfo& v : r.inputs) require_cuda_float(r.node, v.info, "inputs");
  const EinsumForm f = einsum_form(r.node, r.inputs, r.outputs[0].shape, DType::Float32);
  const std::map<int, int64_t>& sizes = f.eq.sizes;
  for (size_t i = 0; i < f.operands; ++i) {
    const Shape& shape = r.inputs[i].info.shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1 && sizes.at(f.eq.inputs[i][d]) != 1) {
        node_fail<UnsupportedModelError>(r.node, "Einsum's CUDA gradient: operand " + std::to_string(i) +
                                                     " broadcasts label '" + label_name(f.eq.inputs[i][d]) +
                                                     "' (its gradient would be a sum)");
      }
    }
  }
  GradChoice choice;
  size_t workspace = f.workspace;  // the forward's gathers of A and B (and C's, unused here)
  const auto grad_out = [&](size_t i, const std::vector<int>& from) {
    GradOut o;
    o.elements = numel(r.inputs[i].info.shape);
    if (same_order(from, f.eq.inputs[i], sizes)) return o;
    o.direct = false;
    o.dims = relayout(r.node, from, f.eq.inputs[i], sizes);
    o.offset = workspace;
    workspace += (static_cast<size_t>(o.elements) * sizeof(float) + 255) / 256 * 256;
    return o;
  };
  OperandPlan dc;
  size_t dc_offset = 0;
  GradOut da, db;
  if (f.operands == 1) {
    da.elements = numel(r.inputs[0].info.shape);
    da.dims = relayout(r.node, f.eq.output, f.eq.inputs[0], sizes);
    choice.algorithm = "gather kernel (transpose of dY)";
  } else {
    if (f.out.gather) {  // dY [output order] -> dC [batch, M, N]
      dc.gather = true;
      dc.elements = numel(r.outputs[0].shape);
      dc.dims = relayout(r.node, f.eq.output, f.c_view.labels, sizes);
      dc_offset = workspace;
      workspace += (static_cast<size_t>(dc.elements) * sizeof(float) + 255) / 256 * 256;
    }
    da = grad_out(0, concat(f.batch, f.m, f.k));
    db = grad_out(1, concat(f.batch, f.k, f.n));
    choice.algorithm = std::string(f.call.batch == 1 ? "cublasSgemm" : "cublasSgemmStridedBatched") +
                       " per operand (dA = dC B^T, dB = A^T dC)";
  }
  choice.workspace_bytes = workspace;
  choice.kernel = std::make_unique<EinsumGradKernel>(cuda_context_of(r), f, dc, dc_offset, da, db);
  return choice;
}

}  // namespace

void register_cuda_einsum_kernels(KernelRegistry& r, const CudaContext& ctx) {
  r.add("Einsum", bind(ctx, plan_einsum))
      .with_dtypes(kFloatAndHalves)
      .refusing(einsum_refusal)
      .with_gradient(plan_einsum_grad);
}

}  // namespace dnnx::cuda
