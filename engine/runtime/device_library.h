// Device backends live in their own shared libraries (libdnnx_cuda.so), opened with dlopen
// only when a model asks for that device: the core links no device library and includes no
// device header, so a machine without a GPU, driver or cuDNN still runs every CPU model.
#pragma once
#include <memory>
#include <string>

#include "runtime/backend.h"
#include "runtime/device_options.h"

namespace dnnx {

// The entry points every device library exports (C names, resolved with dlsym).
constexpr const char* kDeviceAbiSymbol = "dnnx_device_abi_version";
constexpr const char* kDeviceProbeSymbol = "dnnx_device_probe";
constexpr const char* kDeviceCreateSymbol = "dnnx_device_create_backend";

struct DeviceProbe {
  bool available = false;
  // Available: what was found ("1 device(s), cuda:0 NVIDIA H200 (sm_90); cuDNN 9.14.0, ...").
  // Otherwise why not: the file is missing, a library it needs does not load, no driver, no GPU.
  std::string message;
};

DeviceProbe probe_device_library(const std::string& path);

// A backend from the library at `path`; DeviceError saying why when there is none.
std::unique_ptr<Backend> create_device_backend(const std::string& path, const DeviceOptions& options);

}  // namespace dnnx
