// Note [mutable constants]: the trainer's tail (engine/train/tail_plan.cc) plans its trainable
// parameters as graph constants, and SGD then changes their bytes in place between steps. A
// kernel that copies a constant at plan time (the CPU's packed product packs B once: Note
// [packed product] in backends/cpu/conv/conv_nhwc_cpu.cc) would keep the old values there. So
// while a tail is planned, this thread says its constants may change, and such kernels read the
// weights at run time instead. (An inference engine's weights never change: Model rebuilds it
// with the tuned ones.)
#pragma once

namespace dnnx {

// Whether the plan being built on this thread may see its constants change after planning.
bool planning_mutable_constants();

// Marks this thread's planning as of mutable constants for the guard's lifetime.
class MutableConstantsScope {
 public:
  MutableConstantsScope();
  ~MutableConstantsScope();
  MutableConstantsScope(const MutableConstantsScope&) = delete;
  MutableConstantsScope& operator=(const MutableConstantsScope&) = delete;

 private:
  bool before_;
};

}  // namespace dnnx
