// Note [mutable constants]: the trainer's tail (engine/train/tail_plan.cc) plans its trainable
// parameters as graph constants, and SGD then changes their bytes in place between steps. A
// kernel that copies a constant at plan time (the CPU's packed product packs B once: Note
// [packed product] in backends/cpu/conv/conv_nhwc_cpu.cc) would keep the old values there. So
// while a tail is planned, this thread says its constants may change, and such kernels read the
// weights at run time instead. (An inference engine's weights never change: Model rebuilds it
// with the tuned ones.) The scope also names the constants that do change, the parameters: the
// planner's folding (Note [plan-time folding]) must not evaluate a node that reads one, or the
// node's output would be a constant of the plan and the parameter would get no gradient.
#pragma once
#include <string>
#include <vector>

namespace dnnx {

// Whether the plan being built on this thread may see its constants change after planning.
bool planning_mutable_constants();
// Whether the constant `name` is one of those that change (a trainable parameter of the tail
// being planned on this thread).
bool constant_changes(const std::string& name);

// Marks this thread's planning as of mutable constants for the guard's lifetime; `changing`:
// the parameters SGD updates (the scope keeps its own copy).
class MutableConstantsScope {
 public:
  explicit MutableConstantsScope(std::vector<std::string> changing);
  ~MutableConstantsScope();
  MutableConstantsScope(const MutableConstantsScope&) = delete;
  MutableConstantsScope& operator=(const MutableConstantsScope&) = delete;

 private:
  std::vector<std::string> changing_;
  bool before_;
  const std::vector<std::string>* changing_before_;
};

}  // namespace dnnx
