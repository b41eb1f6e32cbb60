// Transpose's gradient: the backend-neutral one of train/transpose_grad.h (the CPU's own Transpose
// kernel, planned for the inverse permutation).
#include "backends/cpu/cpu_grad_kernels.h"
#include "train/transpose_grad.h"

namespace dnnx {

void register_cpu_transpose_grad_kernels(GradRegistry& r) { r.add("Transpose", plan_transpose_grad); }

}  // namespace dnnx
