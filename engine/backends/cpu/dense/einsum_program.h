// Note [einsum program]: an Einsum equation becomes, at plan time, a list of steps over the
// operands, each operand seen through per-label strides (no copy yet):
//   - one operand: a single strided sum into the output (a transpose, a diagonal — a repeated
//     label's strides add up —, a sum over the labels the output drops, or all at once);
//   - more: operands folded left to right. For the running result L and the next operand R,
//     each label is a batch label (in both, needed later), a contracted one (in both, not
//     needed later), an M label (L only, needed later) or an N label (R only); labels used by
//     one side only and not needed later are summed away while that side is laid out. L is
//     laid out as [batch, M, K] and R as [batch, K, N] (a strided sum; skipped when the operand
//     already is in that order), then one GEMM per batch (OpenBLAS sgemm for float32, a plain
//     loop for the integers) gives [batch, M, N], the next L;
//   - finally a strided sum lays the last result out in the output's label order.
// Every intermediate lives in the kernel's workspace; the gradient (einsum_grad_cpu.cc) builds
// programs of the same kind.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace dnnx {

// out[o...] = sum over r... of in[o... * out_strides + r... * red_strides] (strides in elements).
struct StridedSum {
  std::vector<int64_t> out_sizes, out_strides;
  std::vector<int64_t> red_sizes, red_strides;
  bool identity() const;  // a plain copy of a contiguous input: skipped, the input read in place
};

// Where a step reads or writes: an operand of the call, or a workspace offset (elements).
struct EinsumRef {
  bool operand = false;
  int64_t at = 0;
};

struct EinsumStep {
  enum Kind { Sum, Gemm } kind = Sum;
  EinsumRef a, b, out;
  StridedSum sum;                            // Sum: a -> out
  int64_t batches = 1, m = 1, k = 1, n = 1;  // Gemm: a [batches, m, k] x b [batches, k, n] -> out
};

struct EinsumProgram {
  std::vector<EinsumStep> steps;
  int64_t workspace_elements = 0;
  std::string describe;  // for plan(): "gemm" / "sum" / "transpose+gemm+..."
};

// One operand: its labels per dim (repeats allowed) and its dims.
struct EinsumOperand {
  std::vector<int> labels;
  Shape shape;
};

// The program computing `output` (distinct labels, sizes from `sizes`) from the operands; the
// last step writes the result (an EinsumRef with operand set and at = operands.size()).
EinsumProgram plan_einsum_program(const std::vector<EinsumOperand>& operands, const std::vector<int>& output,
                                  const std::map<int, int64_t>& sizes);

// Runs it on the operands' buffers, writing `out`; T is float, int32_t or int64_t; workspace holds
// p.workspace_elements of T.
template <class T>
void run_einsum_program(const EinsumProgram& p, const std::vector<const T*>& inputs, T* out, T* workspace);

}  // namespace dnnx
