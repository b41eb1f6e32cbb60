// Transpose's gradient: the backend-neutral one of train/transpose_grad.h (the CPU's own Transpose
// kernel, planned for the inverse permutation).
#include "runtime/kernel_registry.h"
#include "train/transpose_grad.h"

namespace dnnx {

void register_cpu_transpose_grad_kernels(KernelRegistry& r) { r.at("Transpose").with_gradient(plan_transpose_grad); }

}  // namespace dnnx
