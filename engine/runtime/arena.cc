#include "runtime/arena.h"

#include <algorithm>
#include <numeric>

#include "runtime/size_check.h"

namespace dnnx {

namespace {
// Saturating (Note [absurd sizes] in runtime/size_check.h): the planner refuses what does not fit.
size_t align_up(size_t n) { return add_sat(n, kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }
}  // namespace

size_t place_blocks(std::vector<ArenaBlock>& blocks) {
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t idx : order) {
    ArenaBlock& block = blocks[idx];
    if (block.bytes == 0) {  // an empty tensor takes no room: nothing reads or writes it (Note [empty tensors])
      block.offset = 0;
      continue;
    }
    const size_t size = align_up(block.bytes);
    // The placed blocks alive at the same time, by offset; take the first gap that fits.
    std::vector<const ArenaBlock*> live;
    for (size_t p : placed) {
      const ArenaBlock& other = blocks[p];
      if (other.first <= block.last && block.first <= other.last) live.push_back(&other);
    }
    std::sort(live.begin(), live.end(),
              [](const ArenaBlock* a, const ArenaBlock* b) { return a->offset < b->offset; });
    size_t offset = 0;
    for (const ArenaBlock* other : live) {
      if (add_sat(offset, size) <= other->offset) break;
      offset = std::max(offset, add_sat(other->offset, align_up(other->bytes)));
    }
    block.offset = offset;
    total = std::max(total, add_sat(offset, size));
    placed.push_back(idx);
  }
  return total;
}

}  // namespace dnnx
