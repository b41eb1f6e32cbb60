#include "runtime/backend.h"

#include <chrono>

#include "runtime/training.h"

namespace dnnx {

// A host backend has no device memory; the engine never calls these hooks for one.
void* Backend::allocate(size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

void Backend::release(void*) const noexcept {}

void Backend::copy_to_device(void*, const void*, size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

void Backend::copy_to_host(void*, const void*, size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

std::unique_ptr<DeviceGraph> Backend::capture(const std::function<void()>&, GraphEdges) const { return nullptr; }

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

std::unique_ptr<LayerTimer> Backend::layer_timer(size_t marks) const { return std::make_unique<HostTimer>(marks); }

int Backend::device_of(const void*) const { return -1; }

void Backend::copy_on_device(void*, const void*, size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

void Backend::wait_for_stream(uintptr_t) const {}

void* Backend::allocate_array(size_t) const {
  throw DeviceError("the " + name() + " backend has no device memory");
}

void Backend::release_array(void*, size_t, const std::vector<uintptr_t>&) const noexcept {}

std::unique_ptr<TrainingOps> Backend::training_ops() const { return nullptr; }

}  // namespace dnnx
