// Failure injection for the planner's fallback paths, read from the environment when a backend
// opens (tests only; unset, nothing changes):
//   DNNX_TEST_FAIL_ALGO=NAME[:oom][,NAME[:oom]...]  the cuDNN algorithm NAME (as plan() names it,
//       e.g. IMPLICIT_GEMM) fails at plan time: as "not supported", or with ":oom" as if its
//       workspace could not be allocated
//   DNNX_TEST_OOM_ABOVE=BYTES  every plan-time allocation of more than BYTES fails as out of memory
// and two C entry points (test_hooks.cc) that drive the plan cache's file logic with no GPU, for
// tests/test_plan_cache_file.py through ctypes (the cache is host code: JSON, a lock, a rename):
//   int dnnx_test_plan_cache_store(path, key, algo, message, message_len): opens the cache at
//       `path` as a model does and stores `key` -> a record of `algo`; 0, or -1 with the
//       warnings in `message`
//   int dnnx_test_plan_cache_find(path, key): the algo a freshly opened cache holds for key; -1 if none
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace dnnx::cuda {

enum class ForcedFailure { None, NotSupported, OutOfMemory };

struct TestHooks {
  std::map<std::string, ForcedFailure> fail_algo;  // algorithm name -> how it fails
  size_t oom_above = SIZE_MAX;

  static TestHooks from_environment();
  ForcedFailure failure_of(const std::string& algorithm) const {
    auto it = fail_algo.find(algorithm);
    return it == fail_algo.end() ? ForcedFailure::None : it->second;
  }
};

}  // namespace dnnx::cuda
