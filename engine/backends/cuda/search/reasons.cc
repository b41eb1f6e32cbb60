#include "backends/cuda/search/reasons.h"

#include <cstdio>

namespace dnnx::cuda {

// Four decimals: 0.1 us, finer than two processes' times of one kernel agree (device_timing.h).
std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f ms", ms);
  return text;
}

std::string mib_text(size_t bytes) {
  const double m = static_cast<double>(bytes) / (1 << 20);
  char text[32];
  std::snprintf(text, sizeof(text), m < 10 ? "%.2f MiB" : "%.0f MiB", m);
  return text;
}

std::string slower_than(double ms, const std::string& winner, double winner_ms) {
  return format_ms(ms) + ", slower than " + winner + (winner_ms >= 0 ? " (" + format_ms(winner_ms) + ")" : "");
}

std::string within_near_tie(double ms, const std::string& winner, double winner_ms) {
  return format_ms(ms) + ", within 10% of " + winner + " (" + format_ms(winner_ms) + ")";
}

}  // namespace dnnx::cuda
