// Note [search scratch]: a timed convolution search runs its candidates on scratch X, W, Y and a
// workspace, and the choice then checks that the chosen workspace can be had (conv_algo.cc's
// workspace_allocates). Each layer allocated and freed its own, some of them gigabytes (the
// workspace limit is 4 GiB, Note [auto search]), and a cudaFree waits for the device: a cold load
// of ResNet-50 at batch 256 spent about a tenth of its planning in cuMemAlloc and cuMemFree
// (py-spy, an H100, 2026-12-06). So the model's context keeps these buffers from one layer to the
// next, each grown (freed, then allocated anew) where a layer needs more, and lets them go when
// the plan's layers are planned (Backend::layers_planned). Nothing is held longer than a plan's
// planning; the workspace is the whole limit (timed_candidates), so the peak is the limit and one
// layer's X, W and Y (the limit is at most an eighth of the device). An allocation elsewhere in the
// planning that finds no room (try_plan_alloc, device_alloc) first lets idle scratch go and tries
// again, so a model under memory_limit plans as it did without the scratch kept.
#pragma once
#include <cstddef>

#include "backends/cuda/runtime/cuda_handles.h"

namespace dnnx::cuda {

struct CudaContext;

// One attempt at `bytes` of device memory for planning, from the model's budget: false (and
// `out` empty) for want of memory, for real or by DNNX_TEST_OOM_ABOVE; any other failure is a
// DeviceError. Lets nothing go (try_plan_alloc, conv_candidates.h, does).
bool plan_alloc_once(const CudaContext& ctx, size_t bytes, DeviceMemory& out);

class SearchScratch {
 public:
  enum Slot { kX, kW, kY, kWorkspace, kSlots };

  // Makes the slot's buffer at least `bytes` (kept if it is; else freed and allocated anew):
  // false, the slot then empty, when that cannot be had.
  bool hold(const CudaContext& ctx, Slot slot, size_t bytes);
  void* get(Slot slot) const { return buffers_[slot].get(); }
  // Frees every buffer.
  void release();
  bool empty() const;

  // While a search runs on the buffers, nothing may let them go (RAII: Busy).
  bool busy() const { return busy_; }
  class Busy {
   public:
    explicit Busy(SearchScratch& s) : s_(s) { s_.busy_ = true; }
    ~Busy() { s_.busy_ = false; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    SearchScratch& s_;
  };

 private:
  DeviceMemory buffers_[kSlots];
  size_t bytes_[kSlots] = {};
  bool busy_ = false;
};

// Lets the context's idle search scratch go: true when it held any (a failed allocation may
// then try again).
bool release_idle_search_scratch(const CudaContext& ctx);

}  // namespace dnnx::cuda
