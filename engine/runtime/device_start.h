// A device backend opened on a thread of its own while the caller reads the model.
//
// Note [overlapped device start]: a cold CUDA load spends ~0.3 s before it can plan anything in
// work that does not need the model: the CUDA libraries' dlopen (cuBLASLt alone is hundreds of
// MB of relocations), the driver's start (cuInit), the context and the cuDNN and cuBLAS handles
// (ResNet-50 at batch 256 on an H100, session 13's cold load: "device" 184 ms, "engine: backend"
// 124 ms). The model's own preparation, parsing the ONNX file, the checker, the IR and the
// engine's copy of the weights (~130 ms there), needs no device. So dnnx.load starts the device
// here first and reads the model meanwhile; the Engine then takes the opened backend (`take`).
// The thread touches no Python object (it never takes the GIL), and nothing else touches the
// device until `take` has joined it. The backend is made current again on the thread that
// builds the Engine (Engine's constructor activates it: the device index is per thread).
// Starting the driver (cuInit) on a second thread beside the libraries' loading saved nothing (an
// H100, session 14: the two took 188-209 ms together, against 61 + 122 ms one after the other).
#pragma once
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backend.h"
#include "runtime/device_library.h"
#include "runtime/device_options.h"

namespace dnnx {

class DeviceStart {
 public:
  // Starts the thread: dlopen each of `preload` (RTLD_GLOBAL; one that does not load is left to
  // the probe to report), probe the library at `library`, and open its backend where a device
  // is available.
  DeviceStart(std::vector<std::string> preload, std::string library, DeviceOptions options);
  ~DeviceStart();  // joins: a load that failed meanwhile waits for the thread, then drops the backend
  DeviceStart(const DeviceStart&) = delete;
  DeviceStart& operator=(const DeviceStart&) = delete;

  // The probe's answer (probe_device_library's), once the thread has it: the backend's opening
  // goes on (the Engine's copy of the weights overlaps it).
  DeviceProbe probe();
  // The opened backend, once; the open's own exception where it failed (a DeviceError where no
  // device was available), a DeviceError when taken twice.
  std::unique_ptr<Backend> take();

  // Seconds the thread spent in each step, for Model.load_profile(): "libraries" (the preloads),
  // "probe" (the library opened, the driver started, the devices counted), "open" (the backend:
  // context, handles, kernel registry). Read after take() (0 for a step not reached).
  double libraries_seconds = 0, probe_seconds = 0, open_seconds = 0;

 private:
  void join();
  void publish(const DeviceProbe& probe);  // the probe's answer, for probe(); the first one stands

  std::mutex mutex_;
  std::condition_variable probed_cv_;
  bool probed_ = false;
  DeviceProbe probe_;  // under mutex_ until probed_
  std::thread thread_;
  std::unique_ptr<Backend> backend_;
  std::exception_ptr error_;
  bool taken_ = false;
};

}  // namespace dnnx
