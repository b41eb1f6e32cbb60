#include "backends/cuda/backend/test_hooks.h"

#include <cstdlib>
#include <sstream>

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
