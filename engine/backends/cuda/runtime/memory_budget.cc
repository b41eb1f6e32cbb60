#include "backends/cuda/runtime/memory_budget.h"

#include "ir/errors.h"
#include "runtime/size_check.h"

namespace dnnx::cuda {

bool MemoryBudget::try_take(size_t bytes) const {
  if (limit_ == 0) {
    held_.fetch_add(bytes);
    return true;
  }
  size_t now = held_.load();
  do {
    if (bytes > limit_ || now > limit_ - bytes) return false;
  } while (!held_.compare_exchange_weak(now, now + bytes));
  return true;
}

void MemoryBudget::take(size_t bytes, const std::string& what) const {
  if (try_take(bytes)) return;
  throw DeviceError(what + ": " + bytes_str(bytes) + " would pass memory_limit=" + bytes_str(limit_) +
                    " (the model holds " + bytes_str(held()) + " on the device already)");
}

}  // namespace dnnx::cuda
