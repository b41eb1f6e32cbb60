#include "runtime/device_library.h"

#include <dlfcn.h>

#include <array>

namespace dnnx {

namespace {

constexpr size_t kErrorLen = 1024;

// The library's entry points. A library, once opened, stays for the life of the process
// (RTLD_NODELETE): kernels and backends created by it may outlive any one model, and the
// CUDA libraries it pulls in are not made to be unloaded and loaded again.
struct DeviceLibrary {
  dnnx_device_probe_fn* probe = nullptr;
  dnnx_device_create_fn* create = nullptr;
};

// Fills `lib`, or returns why it cannot be.
std::string open_library(const std::string& path, DeviceLibrary& lib) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* why = dlerror();
    return "cannot load " + path + ": " + (why ? why : "unknown dlopen error");
  }
  auto* abi = reinterpret_cast<dnnx_device_abi_version_fn*>(dlsym(handle, kDeviceAbiSymbol));
  lib.probe = reinterpret_cast<dnnx_device_probe_fn*>(dlsym(handle, kDeviceProbeSymbol));
  lib.create = reinterpret_cast<dnnx_device_create_fn*>(dlsym(handle, kDeviceCreateSymbol));
  if (!abi || !lib.probe || !lib.create) return path + " is not a dnnx device library (entry points missing)";
  if (abi() != kDeviceAbiVersion) {
    return path + " was built for device ABI " + std::to_string(abi()) + ", this core needs " +
           std::to_string(kDeviceAbiVersion) + " (rebuild dnnx)";
  }
  return "";
}

}  // namespace

DeviceProbe probe_device_library(const std::string& path) {
  DeviceLibrary lib;
  DeviceProbe probe;
  probe.message = open_library(path, lib);
  if (!probe.message.empty()) return probe;
  std::array<char, kErrorLen> message{};
  probe.available = lib.probe(message.data(), message.size()) > 0;
  probe.message = message.data();
  return probe;
}

std::unique_ptr<Backend> create_device_backend(const std::string& path, const DeviceOptions& options) {
  DeviceLibrary lib;
  const std::string why = open_library(path, lib);
  if (!why.empty()) throw DeviceError(why);
  std::array<char, kErrorLen> error{};
  std::unique_ptr<Backend> backend(lib.create(&options, error.data(), error.size()));
  if (!backend) throw DeviceError(error.data());
  return backend;
}

}  // namespace dnnx
