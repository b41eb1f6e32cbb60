// Failure injection for the planner's fallback paths, read from the environment when a backend
// opens (tests only; unset, nothing changes):
//   DNNX_TEST_FAIL_ALGO=NAME[:oom][,NAME[:oom]...]  the cuDNN algorithm NAME (as plan() names it,
//       e.g. IMPLICIT_GEMM) fails at plan time: as "not supported", or with ":oom" as if its
//       workspace could not be allocated
//   DNNX_TEST_FAIL_ALGO=NAME:run  NAME (a KernelChoice::candidate: a cuDNN algorithm, or the
//       planner's own "direct (1 input channel)", ...) plans as usual but fails each time it runs,
//       as a cuDNN call that returns CUDNN_STATUS_EXECUTION_FAILED (Note [run-time fallback])
//   DNNX_TEST_OOM_ABOVE=BYTES  every plan-time allocation of more than BYTES fails as out of memory
//   DNNX_TEST_FAULT_NODE=NAME  the node named NAME, before its kernel, launches one that writes to
//       an illegal address: a sticky CUDA error (run it in a process of its own)
//   DNNX_PROBE_RNN_ALGO=standard|persist_static|persist_dynamic  the cuDNN RNN algorithm every
//       RNN descriptor asks for (bench/probes/probe_rnn_algo.py measures them; the plan still
//       names the standard one)
//   DNNX_PROBE_RETIME_ALL=1  a conv search re-times every candidate cuDNN's Find ran, not only
//       those within reach of its fastest (Note [retimed within reach], conv_candidates.cc)
//   DNNX_PROBE_RETIME_REACH=F  that reach (kRetimeReach, 0: none) for the layers it applies to;
//       F < 1 re-times none of them (Find's times stand), for bench_load.py --cold to compare loads
//   DNNX_PROBE_RETIME_SMALL_REACH=F  the same for the small layers (Find's fastest under
//       kRetimeAllBelowMs), which re-time every candidate unless this is set
//   DNNX_PROBE_DIRECT_CONV_GRAD=0  Conv's gradients on cuDNN's backward algorithms only, not the
//       direct kernels (direct_conv_grad.h), for the tests of cuDNN's backward planner and for A/B probes
// and two C entry points (test_hooks.cc) that drive the plan cache's file logic with no GPU, for
// tests/test_plan_cache_file.py through ctypes (the cache is host code: JSON, a lock, a rename):
//   int dnnx_test_plan_cache_store(path, key, algo, message, message_len): opens the cache at
//       `path` as a model does and stores `key` -> a record of `algo`; 0, or -1 with the
//       warnings in `message`
//   int dnnx_test_plan_cache_find(path, key): the algo a freshly opened cache holds for key; -1 if none
#pragma once
#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "runtime/backend.h"

namespace dnnx::cuda {

enum class ForcedFailure { None, NotSupported, OutOfMemory };

struct TestHooks {
  std::map<std::string, ForcedFailure> fail_algo;  // algorithm name -> how it fails at plan time
  std::set<std::string> fail_at_run;               // candidates that fail each time they run
  size_t oom_above = SIZE_MAX;
  std::string fault_node;                          // the node whose run faults (DNNX_TEST_FAULT_NODE)
  int rnn_algo = 0;                                // DNNX_PROBE_RNN_ALGO: a cudnnRNNAlgo_t, 0 standard
  bool retime_all = false;                         // DNNX_PROBE_RETIME_ALL=1
  float retime_reach = -1;                         // DNNX_PROBE_RETIME_REACH (-1: kRetimeReach)
  float retime_small_reach = -1;                   // DNNX_PROBE_RETIME_SMALL_REACH (-1: all)
  bool int8_nhwc = false;                          // DNNX_PROBE_INT8_NHWC=1 (Note [int8 nhwc on cuda])
  // DNNX_PROBE_CHANNEL_CONCAT=0: Concat, Split, Slice, the shuffle and ReduceMean keep ONNX's layout
  bool channel_concat = true;
  bool conv_activation = true;                     // DNNX_PROBE_CUDA_CONV_ACTIVATION=0: off (Note [conv activations on cuda])
  // DNNX_PROBE_DIRECT_CONV_GRAD=0: Conv's gradients on cuDNN only (Note [direct conv gradients])
  bool direct_conv_grad = true;

  static TestHooks from_environment();
  ForcedFailure failure_of(const std::string& algorithm) const {
    auto it = fail_algo.find(algorithm);
    return it == fail_algo.end() ? ForcedFailure::None : it->second;
  }
};

// `choice`'s kernel as the hooks make it run for `node`: failing each time (fail_at_run), or
// launching the faulting kernel first (fault_node); unchanged when no hook names it.
void apply_run_hooks(const TestHooks& hooks, cudaStream_t stream, const Node& node, KernelChoice& choice);

}  // namespace dnnx::cuda
