#include "runtime/backend.h"

#include <chrono>

#include "runtime/size_check.h"
#include "runtime/training.h"

namespace dnnx {

namespace {

// The host clock: a host backend's kernels have finished when run() returns.
class HostTimer final : public LayerTimer {
 public:
  explicit HostTimer(size_t marks) : marks_(marks) {}
  void mark(size_t i) override { marks_.at(i) = std::chrono::steady_clock::now(); }
  double elapsed_ms(size_t i) const override {
    return std::chrono::duration<double, std::milli>(marks_.at(i + 1) - marks_.at(i)).count();
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> marks_;
};

}  // namespace

void Backend::activate() const {
  if (const DeviceServices* d = device()) d->activate();
}

void Backend::synchronize() const {
  if (const DeviceServices* d = device()) d->synchronize();
}

int Backend::device_index() const {
  const DeviceServices* d = device();
  return d ? d->device_index() : -1;
}

std::unique_ptr<LayerTimer> Backend::layer_timer(size_t marks) const {
  if (const DeviceServices* d = device()) return d->layer_timer(marks);
  return std::make_unique<HostTimer>(marks);
}

size_t Backend::memory_bytes() const {
  const DeviceServices* d = device();
  return d ? d->total_memory() : host_memory_bytes();
}

std::string Backend::memory_name() const {
  const DeviceServices* d = device();
  return d ? d->memory_name() : "the host";
}

std::unique_ptr<TrainingOps> Backend::training_ops() const { return nullptr; }

KernelChoice Backend::replan_node(const Node& node, const std::vector<ValueInfo>&, const std::vector<TensorInfo>&,
                                  const std::vector<std::string>&, size_t) const {
  throw UnsupportedModelError(node.where() + ": the " + name() + " backend has no other kernel for " + node.op_type);
}

const DeviceServices& device_services(const Backend& backend, const char* what) {
  const DeviceServices* d = backend.device();
  if (!d) throw DeviceError(std::string(what) + ": the " + backend.name() + " backend has no device memory");
  return *d;
}

StagedChoice Backend::plan_staged_node(const Node& node, const std::vector<ValueInfo>&) const {
  StagedChoice none;
  none.host_reason = "the " + name() + " backend has no device kernel for " + node.op_type;
  return none;
}

}  // namespace dnnx
