#include "runtime/size_check.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace dnnx {

namespace {

// cgroup v2's memory.max of this process's group ("max" or missing: SIZE_MAX).
size_t cgroup_limit() {
  std::FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r");
  if (!f) return SIZE_MAX;
  unsigned long long n = 0;
  const bool number = std::fscanf(f, "%llu", &n) == 1;
  std::fclose(f);
  return number && n > 0 ? static_cast<size_t>(n) : SIZE_MAX;
}

}  // namespace

size_t host_memory_bytes() {
  static const size_t bytes = [] {
    size_t limit = SIZE_MAX;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0 &&
        __builtin_mul_overflow(static_cast<size_t>(pages), static_cast<size_t>(page), &limit)) {
      limit = SIZE_MAX;
    }
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
      limit = std::min(limit, static_cast<size_t>(as.rlim_cur));
    }
    return std::min(limit, cgroup_limit());
  }();
  return bytes;
}

std::string bytes_str(size_t bytes) {
  if (bytes == SIZE_MAX) return "more than 2^64 bytes";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::string out = std::to_string(bytes) + " bytes";
  if (bytes < 1024) return out;
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), " (%.1f %s)", v, units[u]);
  return out + buf;
}

void check_fits(size_t bytes, size_t limit, const std::string& what, const std::string& detail,
                const std::string& device) {
  if (bytes <= limit) return;
  throw TooLargeError(what + ": " + (detail.empty() ? "" : detail + " ") + "needs " + bytes_str(bytes) +
                      ", more than " + device + " has (" + bytes_str(limit) + ")");
}

}  // namespace dnnx
