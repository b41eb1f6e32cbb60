// Einsum programs on the CPU: planning and running them (Note [einsum program] in
// einsum_program.h).
#include "backends/cpu/dense/einsum_program.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "backends/cpu/dense/blas.h"

namespace dnnx {

namespace {

// An operand seen through one stride per distinct label.
struct View {
  std::vector<int> labels;
  std::vector<int64_t> strides;
  EinsumRef ref;
};

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) st[d - 1] = st[d] * sizes[d];
  return st;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

View operand_view(const EinsumOperand& op, const std::map<int, int64_t>& sizes, EinsumRef ref) {
  View v;
  v.ref = ref;
  const std::vector<int64_t> st = contiguous_strides(op.shape);
  for (size_t d = 0; d < op.labels.size(); ++d) {
    const int label = op.labels[d];
    // a size-1 dim broadcast to a larger label size reads its one element throughout
    const int64_t stride = (op.shape[d] == 1 && sizes.at(label) != 1) ? 0 : st[d];
    auto it = std::find(v.labels.begin(), v.labels.end(), label);
    if (it == v.labels.end()) {
      v.labels.push_back(label);
      v.strides.push_back(stride);
    } else {
      v.strides[it - v.labels.begin()] += stride;  // a repeated label walks the diagonal
    }
  }
  return v;
}

int64_t stride_of(const View& v, int label) {
  return v.strides[std::find(v.labels.begin(), v.labels.end(), label) - v.labels.begin()];
}

StridedSum layout(const View& v, const std::vector<int>& order, const std::vector<int>& reduce,
                  const std::map<int, int64_t>& sizes) {
  StridedSum s;
  for (int l : order) {
    s.out_sizes.push_back(sizes.at(l));
    s.out_strides.push_back(stride_of(v, l));
  }
  for (int l : reduce) {
    s.red_sizes.push_back(sizes.at(l));
    s.red_strides.push_back(stride_of(v, l));
  }
  return s;
}

std::vector<int64_t> sizes_of(const std::vector<int>& labels, const std::map<int, int64_t>& sizes) {
  std::vector<int64_t> out;
  for (int l : labels) out.push_back(sizes.at(l));
  return out;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

template <class T>
void strided_sum(const StridedSum& s, const T* in, T* out) {
  const size_t no = s.out_sizes.size(), nr = s.red_sizes.size();
  const int64_t total = product(s.out_sizes), red_total = product(s.red_sizes);
  std::vector<int64_t> at(no, 0), rat(nr, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < total; ++o) {
    T acc = T(0);
    int64_t roff = 0;
    for (int64_t r = 0; r < red_total; ++r) {
      acc += in[off + roff];
      for (size_t d = nr; d-- > 0;) {
        roff += s.red_strides[d];
        if (++rat[d] < s.red_sizes[d]) break;
        roff -= s.red_strides[d] * s.red_sizes[d];
        rat[d] = 0;
      }
    }
    out[o] = acc;
    for (size_t d = no; d-- > 0;) {
      off += s.out_strides[d];
      if (++at[d] < s.out_sizes[d]) break;
      off -= s.out_strides[d] * s.out_sizes[d];
      at[d] = 0;
    }
  }
}

void batched_gemm(const EinsumStep& g, const float* a, const float* b, float* c) {
  const int m = static_cast<int>(g.m), k = static_cast<int>(g.k), n = static_cast<int>(g.n);
  for (int64_t i = 0; i < g.batches; ++i) {
    sgemm(false, false, m, n, k, 1.0f, a + i * g.m * g.k, k, b + i * g.k * g.n, n, 0.0f, c + i * g.m * g.n, n);
  }
}

template <class T>
void batched_gemm(const EinsumStep& g, const T* a, const T* b, T* c) {
  for (int64_t i = 0; i < g.batches; ++i) {
    const T* ai = a + i * g.m * g.k;
    const T* bi = b + i * g.k * g.n;
    T* ci = c + i * g.m * g.n;
    std::fill(ci, ci + g.m * g.n, T(0));
    for (int64_t r = 0; r < g.m; ++r) {
      for (int64_t j = 0; j < g.k; ++j) {
        const T x = ai[r * g.k + j];
        for (int64_t col = 0; col < g.n; ++col) ci[r * g.n + col] += x * bi[j * g.n + col];
      }
    }
  }
}

}  // namespace

bool StridedSum::identity() const {
  if (!red_sizes.empty()) return false;
  int64_t step = 1;
  for (size_t d = out_sizes.size(); d-- > 0;) {
    if (out_sizes[d] != 1 && out_strides[d] != step) return false;
    step *= out_sizes[d];
  }
  return true;
}

EinsumProgram plan_einsum_program(const std::vector<EinsumOperand>& operands, const std::vector<int>& output,
                                  const std::map<int, int64_t>& sizes) {
  EinsumProgram p;
  const EinsumRef result{true, static_cast<int64_t>(operands.size())};
  const auto scratch = [&p](int64_t elements) {
    const EinsumRef r{false, p.workspace_elements};
    p.workspace_elements += elements;
    return r;
  };
  View cur = operand_view(operands[0], sizes, EinsumRef{true, 0});
  for (size_t i = 1; i < operands.size(); ++i) {
    const View next = operand_view(operands[i], sizes, EinsumRef{true, static_cast<int64_t>(i)});
    std::set<int> later(output.begin(), output.end());
    for (size_t j = i + 1; j < operands.size(); ++j) later.insert(operands[j].labels.begin(), operands[j].labels.end());
    std::vector<int> batch, contract, m, n, reduce_l, reduce_r;
    for (int l : cur.labels) {
      const bool needed = later.count(l) != 0;
      if (contains(next.labels, l)) {
        (needed ? batch : contract).push_back(l);
      } else {
        (needed ? m : reduce_l).push_back(l);
      }
    }
    for (int l : next.labels) {
      if (!contains(cur.labels, l)) (later.count(l) ? n : reduce_r).push_back(l);
    }
    EinsumStep gemm;
    gemm.kind = EinsumStep::Gemm;
    gemm.batches = product(sizes_of(batch, sizes));
    gemm.m = product(sizes_of(m, sizes));
    gemm.k = product(sizes_of(contract, sizes));
    gemm.n = product(sizes_of(n, sizes));
    std::vector<int> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), m.begin(), m.end());
    a_order.insert(a_order.end(), contract.begin(), contract.end());
    b_order.insert(b_order.end(), contract.begin(), contract.end());
    b_order.insert(b_order.end(), n.begin(), n.end());
    const auto lay_out = [&](const View& v, const std::vector<int>& order, const std::vector<int>& reduce) {
      EinsumStep s;
      s.sum = layout(v, order, reduce, sizes);
      if (s.sum.identity()) return v.ref;
      s.a = v.ref;
      s.out = scratch(product(s.sum.out_sizes));
      p.steps.push_back(s);
      p.describe += "layout+";
      return s.out;
    };
    gemm.a = lay_out(cur, a_order, reduce_l);
    gemm.b = lay_out(next, b_order, reduce_r);
    gemm.out = scratch(gemm.batches * gemm.m * gemm.n);
    p.steps.push_back(gemm);
    p.describe += "gemm+";
    View folded;
    folded.labels = batch;
    folded.labels.insert(folded.labels.end(), m.begin(), m.end());
    folded.labels.insert(folded.labels.end(), n.begin(), n.end());
    folded.strides = contiguous_strides(sizes_of(folded.labels, sizes));
    folded.ref = gemm.out;
    cur = std::move(folded);
  }
  std::vector<int> reduce;
  for (int l : cur.labels) {
    if (!contains(output, l)) reduce.push_back(l);
  }
  EinsumStep last;
  last.sum = layout(cur, output, reduce, sizes);
  if (last.sum.identity() && !p.steps.empty() && p.steps.back().kind == EinsumStep::Gemm) {
    p.steps.back().out = result;  // the last GEMM writes the output in its order
    p.describe.pop_back();
    return p;
  }
  last.a = cur.ref;
  last.out = result;
  p.steps.push_back(last);
  p.describe += reduce.empty() ? (last.sum.identity() ? "copy" : "transpose") : "sum";
  return p;
}

template <class T>
void run_einsum_program(const EinsumProgram& p, const std::vector<const T*>& inputs, T* out, T* workspace) {
  const auto read = [&](const EinsumRef& r) -> const T* {
    if (!r.operand) return workspace + r.at;
    return static_cast<size_t>(r.at) == inputs.size() ? out : inputs[r.at];
  };
  const auto write = [&](const EinsumRef& r) -> T* {
    return r.operand ? out : workspace + r.at;  // only the result is an operand written
  };
  for (const EinsumStep& s : p.steps) {
    if (s.kind == EinsumStep::Sum) {
      strided_sum(s.sum, read(s.a), write(s.out));
      continue;
    }
    T* c = write(s.out);
    if (s.batches == 0 || s.m == 0 || s.n == 0) continue;
    if (s.k == 0) {  // an empty sum: zeros (sgemm is not asked to handle K = 0)
      std::fill(c, c + s.batches * s.m * s.n, T(0));
      continue;
    }
    batched_gemm(s, read(s.a), read(s.b), c);
  }
}

template void run_einsum_program<float>(const EinsumProgram&, const std::vector<const float*>&, float*, float*);
template void run_einsum_program<int32_t>(const EinsumProgram&, const std::vector<const int32_t*>&, int32_t*,
                                          int32_t*);
template void run_einsum_program<int64_t>(const EinsumProgram&, const std::vector<const int64_t*>&, int64_t*,
                                          int64_t*);

}  // namespace dnnx
