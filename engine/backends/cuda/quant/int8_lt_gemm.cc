// The int8 cublasLtMatmul (int8_lt_gemm.h; Note [cublasLt int8 requirements] there).
#include "backends/cuda/quant/int8_lt_gemm.h"

#include <vector>

#include "backends/cuda/runtime/cuda_check.h"

namespace dnnx::cuda {

namespace {

// "" for CUBLAS_STATUS_SUCCESS, else "<call>: <status>".
std::string failed(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return "";
  return std::string(call) + " returned " + cublasGetStatusString(status);
}

}  // namespace

Int8LtGemm::~Int8LtGemm() {
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (op_) cublasLtMatmulDescDestroy(op_);
}

std::string Int8LtGemm::plan(const CudaContext& ctx, int64_t rows, int64_t m_pad, int64_t k_pad,
                             size_t workspace_limit) {
  if (m_pad % 4 != 0 || k_pad % 4 != 0 || rows <= 0) {
    return "m and k must be multiples of 4 and rows positive (m " + std::to_string(m_pad) + ", k " +
           std::to_string(k_pad) + ", rows " + std::to_string(rows) + ")";
  }
  std::string why = failed(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32I, CUDA_R_32I), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_a = CUBLAS_OP_T, op_b = CUBLAS_OP_N;  // "TN": cuBLASLt's A is W, its B is X
  if (why.empty()) {
    why = failed(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)),
                 "cublasLtMatmulDescSetAttribute (transa)");
  }
  if (why.empty()) {
    why = failed(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)),
                 "cublasLtMatmulDescSetAttribute (transb)");
  }
  // As stored, column-major: W [m_pad, k_pad] row-major is [k_pad, m_pad] (ld k_pad), X [rows,
  // k_pad] is [k_pad, rows] (ld k_pad), the sums [rows, m_pad] are [m_pad, rows] (ld m_pad).
  const auto k = static_cast<uint64_t>(k_pad), m = static_cast<uint64_t>(m_pad), n = static_cast<uint64_t>(rows);
  if (why.empty()) why = failed(cublasLtMatrixLayoutCreate(&a_, CUDA_R_8I, k, m, k_pad), "cublasLtMatrixLayoutCreate (W)");
  if (why.empty()) why = failed(cublasLtMatrixLayoutCreate(&b_, CUDA_R_8I, k, n, k_pad), "cublasLtMatrixLayoutCreate (X)");
  if (why.empty()) {
    why = failed(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32I, m, n, m_pad), "cublasLtMatrixLayoutCreate (sums)");
  }
  if (!why.empty()) return why;
  cublasLtMatmulPreference_t pref = nullptr;
  why = failed(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  if (!why.empty()) return why;
  const uint64_t limit = workspace_limit;
  const uint32_t alignment = kInt8GemmAlignment;
  why = failed(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit)),
               "cublasLtMatmulPreferenceSetAttribute (workspace)");
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    if (why.empty()) {
      why = failed(cublasLtMatmulPreferenceSetAttribute(pref, attr, &alignment, sizeof(alignment)),
                   "cublasLtMatmulPreferenceSetAttribute (alignment)");
    }
  }
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (why.empty()) {
    why = failed(cublasLtMatmulAlgoGetHeuristic(ctx.cublas_lt, op_, a_, b_, d_, d_, pref, 1, &result, &found),
                 "cublasLtMatmulAlgoGetHeuristic");
  }
  cublasLtMatmulPreferenceDestroy(pref);
  if (!why.empty()) return why;
  if (found < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
    return "cuBLASLt has no int8 algorithm for rows " + std::to_string(rows) + ", m " + std::to_string(m_pad) + ", k " +
           std::to_string(k_pad) + " within the workspace limit";
  }
  algo_ = result.algo;
  workspace_bytes_ = result.workspaceSize;
  return "";
}

void Int8LtGemm::run(const CudaContext& ctx, const int8_t* x, const int8_t* w, int32_t* sums, void* workspace) const {
  const int32_t one = 1, zero = 0;  // CUDA_R_32I scale type: alpha and beta are int32
  check(cublasLtMatmul(ctx.cublas_lt, op_, &one, w, a_, x, b_, &zero, sums, d_, sums, d_, &algo_,
                       workspace_bytes_ ? workspace : nullptr, workspace_bytes_, ctx.stream),
        "cublasLtMatmul (int8)");
}

}  // namespace dnnx::cuda
