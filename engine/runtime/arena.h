// Liveness-based placement of activations in one arena.
#pragma once
#include <cstddef>
#include <vector>

namespace dnnx {

// One buffer to place: it is written by step `first` and last read by step `last` (inclusive).
struct ArenaBlock {
  size_t bytes = 0;
  int first = 0;
  int last = 0;
  size_t offset = 0;  // filled by place_blocks
};

constexpr size_t kArenaAlignment = 64;

// Assigns offsets so that blocks whose lifetimes overlap never overlap in memory (greedy:
// largest first, lowest gap that fits). Returns the arena size in bytes.
size_t place_blocks(std::vector<ArenaBlock>& blocks);

}  // namespace dnnx
