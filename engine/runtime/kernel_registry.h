// What a backend runs, op type by op type: one KernelEntry per op and backend holds everything
// the engine needs to know about that op there — the forward kernel, the gradient kernel, the
// element types it stores and the nodes it refuses. The registry is the one place the engine
// learns it; no other per-op list exists (the support matrix, docs/operators.md, is generated
// from it: scripts/gen_operators.py).
//
// Each backend fills its registry from one explicit list of registration functions, one per
// kernel file (backends/cpu/cpu_kernel_list.cc, backends/cuda/backend/cuda_kernel_list.cc);
// nothing registers itself statically. The list runs the forward files first, so that a
// gradient file finds the entry its forward file made (KernelRegistry::at).
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"
#include "runtime/training.h"

namespace dnnx {

// Why a backend cannot run one node of an op type it has a kernel for ("" when it can): an
// attribute or a form its kernel does not take (an LSTM's peepholes on cuDNN, an asymmetric pad
// in a channels-last window op). Asked at load, for every node.
using NodeCheck = std::function<std::string(const Node&)>;

// What one backend offers for one op type:
//   factory   the forward kernel for one node with fixed shapes
//   gradient  the backward half for fine-tuning (runtime/training.h); empty: the op cannot sit
//             in a trainable tail on this backend. Why a node of a trainable op still cannot be
//             trained whatever the backend (BatchNorm's statistics, an LSTM's clip) is the op's
//             own check, OpDef::untrainable (ops/op.h).
//   dtypes    the float element types its kernels store: Float32, and Float16 where a half
//             kernel exists (precision="fp16": the half_storage pass converts only these nodes);
//             none for a bool-only op (Not, And, Or, Xor). The integer and bool types an op
//             takes are its OpDef's (ops/elementwise/elementwise.h), on every backend alike
//   check     the nodes of the type it refuses, and why (empty: none)
//   staged    a value-shaped op's device kernel (Note [device staged kernels] in
//             runtime/staged_kernel.h), run between plan stages; such an entry has no factory
struct KernelEntry {
  KernelFactory factory;
  StagedFactory staged;
  GradFactory gradient;
  std::vector<DType> dtypes = {DType::Float32};
  NodeCheck check;

  KernelEntry& with_dtypes(std::vector<DType> types) {
    dtypes = std::move(types);
    return *this;
  }
  KernelEntry& refusing(NodeCheck why_not) {
    check = std::move(why_not);
    return *this;
  }
  KernelEntry& with_gradient(GradFactory backward) {
    gradient = std::move(backward);
    return *this;
  }
  bool stores(DType t) const {
    for (DType d : dtypes) {
      if (d == t) return true;
    }
    return false;
  }
  std::string refusal(const Node& node) const { return check ? check(node) : ""; }
};

// Op key -> entry: the op type, "domain::op_type" outside ai.onnx (Note [op domains] in ir/graph.h).
class KernelRegistry {
 public:
  // Movable, not copyable: the index points into this object's map.
  KernelRegistry() = default;
  KernelRegistry(KernelRegistry&&) = default;
  KernelRegistry& operator=(KernelRegistry&&) = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // Adds (or replaces) the op's entry; its capabilities are set on the returned entry:
  //   r.add("Conv", plan_conv).with_dtypes(kFloatAndHalves).refusing(why_not);
  KernelEntry& add(const std::string& op_type, KernelFactory factory) {
    KernelEntry& e = slot(op_type);
    e = KernelEntry{};
    e.factory = std::move(factory);
    return e;
  }
  // A value-shaped op's staged device kernel (no layer kernel: the plan stops before the node):
  //   r.add_staged("NonZero", plan_nonzero).with_dtypes(...);
  KernelEntry& add_staged(const std::string& op_type, StagedFactory factory) {
    KernelEntry& e = slot(op_type);
    e = KernelEntry{};
    e.staged = std::move(factory);
    return e;
  }
  // The entry an earlier registration made, for a gradient file to complete:
  //   r.at("Conv").with_gradient(plan_conv_grad);
  // A missing one is the list's mistake (a gradient file ahead of its forward file).
  KernelEntry& at(const std::string& op_type) {
    auto it = entries_.find(op_type);
    if (it == entries_.end()) throw std::logic_error("gradient registered for " + op_type + " before its kernel");
    return it->second;
  }
  const KernelEntry* entry(const std::string& op_type) const {
    auto it = index_.find(op_type);
    return it == index_.end() ? nullptr : it->second;
  }
  const KernelEntry* entry(const Node& node) const { return entry(node.op_key()); }
  const KernelFactory* find(const Node& node) const { return find(node.op_key()); }
  const GradFactory* gradient(const Node& node) const { return gradient(node.op_key()); }
  const KernelFactory* find(const std::string& op_type) const {
    const KernelEntry* e = entry(op_type);
    return e && e->factory ? &e->factory : nullptr;  // a staged entry has no layer kernel
  }
  const GradFactory* gradient(const std::string& op_type) const {
    const KernelEntry* e = entry(op_type);
    return e && e->gradient ? &e->gradient : nullptr;
  }
  // "Add, Concat, ..." of the ops that have a gradient (for the message that refuses the rest).
  std::string trainable_joined() const {
    std::string out;
    for (const auto& kv : entries_) {
      if (kv.second.gradient) out += (out.empty() ? "" : ", ") + kv.first;
    }
    return out;
  }
  const std::map<std::string, KernelEntry>& entries() const { return entries_; }

 private:
  KernelEntry& slot(const std::string& op_type) {
    KernelEntry& e = entries_[op_type];
    index_[op_type] = &e;  // a std::map's elements stay where they are
    return e;
  }

  std::map<std::string, KernelEntry> entries_;  // sorted, for the support matrix
  // The same entries by key for find(), which planning asks per node (OpRegistry's index_ says why).
  std::unordered_map<std::string, const KernelEntry*> index_;
};

}  // namespace dnnx
