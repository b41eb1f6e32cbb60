#include "runtime/device_start.h"

#include <dlfcn.h>

#include "ir/errors.h"

namespace dnnx {

DeviceStart::DeviceStart(std::vector<std::string> preload, std::string library, DeviceOptions options) {
  thread_ = std::thread([this, preload = std::move(preload), library = std::move(library), options] {
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    DeviceProbe probe;
    try {  // nothing may leave a thread's function (std::terminate)
      auto t = Clock::now();
      for (const std::string& path : preload) dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
      libraries_seconds = since(t);
      t = Clock::now();
      probe = probe_device_library(library);
      probe_seconds = since(t);
      if (probe.available) {
        publish(probe);
        t = Clock::now();
        backend_ = create_device_backend(library, options);
        open_seconds = since(t);
        return;
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    publish(probe);  // unavailable, or the probe itself failed
  });
}

void DeviceStart::publish(const DeviceProbe& probe) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (probed_) return;
    probe_ = probe;
    probed_ = true;
  }
  probed_cv_.notify_all();
}

DeviceStart::~DeviceStart() { join(); }

void DeviceStart::join() {
  if (thread_.joinable()) thread_.join();
}

DeviceProbe DeviceStart::probe() {
  std::unique_lock<std::mutex> lock(mutex_);
  probed_cv_.wait(lock, [this] { return probed_; });
  return probe_;
}

std::unique_ptr<Backend> DeviceStart::take() {
  join();
  if (taken_) throw DeviceError("the started device backend was already taken by an engine");
  taken_ = true;
  if (error_) std::rethrow_exception(error_);
  if (!backend_) throw DeviceError(probe_.message);
  return std::move(backend_);
}

}  // namespace dnnx
