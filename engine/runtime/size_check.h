// Note [absurd sizes]: a model may declare a dim of 2^40 (a broken exporter, a fuzzer, a hostile
// file), and a caller may ask for a batch of a billion. Planning such shapes used to build
// per-position tables and arenas until the allocator gave up a minute later (std::bad_alloc).
// Now every size is computed with overflow-safe arithmetic (numel and TensorInfo::bytes
// saturate, ir/tensor.h) and checked against what the backend's device has before anything of
// that size is allocated: each graph input and each node output as soon as its type is
// inferred (before the backend plans the node), each layer's workspace, then the arena as
// placed. The limit is the device's total memory (Backend::memory_bytes: the host's physical
// memory on the CPU, or a lower cap the process runs under; the GPU's on CUDA): a tensor that
// cannot fit in all of it can never run, so refusing it costs nothing real. The refusal takes
// microseconds and names the tensor and the bytes it would need: a TooLargeError, which is an
// InvalidModelError (the model's declared shapes, its constants), and which Engine::plan_for
// turns into an InputError (Python's ValueError) when the sizes come from the caller's shapes.
#pragma once
#include <cstddef>
#include <string>

#include "ir/errors.h"
#include "ir/tensor.h"

namespace dnnx {

struct TooLargeError : InvalidModelError {
  using InvalidModelError::InvalidModelError;
};

// What the host has for this process, in bytes: its physical memory (sysconf: pages times page
// size), or less where the process's address space (RLIMIT_AS) or its cgroup (v2 memory.max) is
// capped; SIZE_MAX if unknown. Read once.
size_t host_memory_bytes();

// "1099511627776 bytes (1.0 TiB)".
std::string bytes_str(size_t bytes);

// Throws TooLargeError when `bytes` (SIZE_MAX for an overflowed size) exceeds `limit`:
// "<what>: <detail> needs <bytes>, more than <device> has (<limit>)". `detail` may be "".
void check_fits(size_t bytes, size_t limit, const std::string& what, const std::string& detail,
                const std::string& device);

// The same for one tensor: its shape and dtype are the detail.
inline void check_fits(const TensorInfo& info, size_t limit, const std::string& what, const std::string& device) {
  check_fits(info.bytes(), limit, what, info.str(), device);
}

// a + b, or SIZE_MAX when that overflows.
inline size_t add_sat(size_t a, size_t b) {
  size_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? SIZE_MAX : out;
}

}  // namespace dnnx
