#include "backends/cuda/backend/test_hooks.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "backends/cuda/search/plan_cache.h"

namespace dnnx::cuda {

TestHooks TestHooks::from_environment() {
  TestHooks hooks;
  if (const char* names = std::getenv("DNNX_TEST_FAIL_ALGO")) {
    std::stringstream list(names);
    std::string item;
    while (std::getline(list, item, ',')) {
      const size_t colon = item.find(':');
      const std::string name = item.substr(0, colon);
      const bool oom = colon != std::string::npos && item.substr(colon + 1) == "oom";
      if (!name.empty()) hooks.fail_algo[name] = oom ? ForcedFailure::OutOfMemory : ForcedFailure::NotSupported;
    }
  }
  if (const char* bytes = std::getenv("DNNX_TEST_OOM_ABOVE")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(bytes, &end, 10);
    if (end != bytes) hooks.oom_above = static_cast<size_t>(n);
  }
  return hooks;
}

}  // namespace dnnx::cuda

extern "C" {

__attribute__((visibility("default"))) int dnnx_test_plan_cache_store(const char* path, const char* key, int algo,
                                                                       char* message, size_t message_len) {
  std::string warnings;
  try {
    dnnx::cuda::PlannerStats stats;
    dnnx::cuda::PlanCache cache(path, stats);
    dnnx::cuda::PlanRecord record;
    record.algo = algo;
    record.algorithm = "test algorithm " + std::to_string(algo);
    record.time_ms = 0.5;
    cache.store(key, record);
    for (const std::string& w : stats.take_report(path).warnings) warnings += w + "\n";
  } catch (const std::exception& e) {
    warnings += e.what();
  }
  if (message && message_len) std::snprintf(message, message_len, "%s", warnings.c_str());
  return warnings.empty() ? 0 : -1;
}

__attribute__((visibility("default"))) int dnnx_test_plan_cache_find(const char* path, const char* key) {
  try {
    dnnx::cuda::PlannerStats stats;
    const dnnx::cuda::PlanCache cache(path, stats);
    const auto record = cache.find(key);
    return record ? record->algo : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // extern "C"
