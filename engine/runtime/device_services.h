// A device backend's services beside planning (runtime/backend.h): its memory, copies, graphs,
// timers and streams. A host backend (the CPU) has none: Backend::device() is nullptr there and
// its kernels read the caller's arrays and the constants' bytes in place. A device backend's
// kernels see only its own memory: the engine uploads the constants once at load, places the
// graph inputs in the device arena (copied in at the start of a run) and copies the outputs back
// at the end (runtime/device_memory.h: DeviceConstants and the run arena; Note [device runs] in
// runtime/device_runner.cc). Any change here changes what the core and a device library share:
// bump kDeviceAbiVersion (runtime/device_options.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dnnx {

class Backend;

// A device-to-device copy at the edge of a recorded graph (Note [edge copies] in
// runtime/device_runner.cc): one input of a run into the arena, or one output into the caller's array.
struct EdgeCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
};

// How many edge copies a graph records room for: before its work (`in`) and after it (`out`).
struct GraphEdges {
  size_t in = 0;
  size_t out = 0;
};

// Work recorded once and replayed as one launch (a CUDA graph). A replay reads and writes the
// very addresses the recording used, so it is valid only while those buffers stay where they were;
// only its edge copies take new addresses at each replay.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  virtual void launch() const = 0;  // queues one replay on the backend's stream
  // Queues one replay whose edge copies are `in` (before the recorded work) and `out` (after it):
  // at most the GraphEdges the graph was recorded with. Not thread-safe (the caller's turn).
  virtual void launch(const std::vector<EdgeCopy>& in, const std::vector<EdgeCopy>& out) = 0;
};

// Times the work queued between marks: mark(i) before layer i and mark(n) after the last one;
// read elapsed_ms once that work has finished (after synchronize() on a device backend).
class LayerTimer {
 public:
  virtual ~LayerTimer() = default;
  virtual void mark(size_t i) = 0;
  virtual double elapsed_ms(size_t i) const = 0;  // from mark i to mark i + 1
};

class DeviceServices {
 public:
  virtual ~DeviceServices() = default;
  // Makes the device current on the calling thread (runs come from any thread).
  virtual void activate() const = 0;
  // Device memory of at least `bytes` (nullptr for 0); DeviceError when it cannot be had.
  virtual void* allocate(size_t bytes) const = 0;
  virtual void release(void* ptr) const noexcept = 0;
  // Copies in the device's stream order; copy_to_host returns when `dst` holds the bytes.
  virtual void copy_to_device(void* dst, const void* src, size_t bytes) const = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) const = 0;
  virtual void copy_on_device(void* dst, const void* src, size_t bytes) const = 0;
  // The stream's scheduling priority from now on: the device's highest for a foreground engine,
  // its lowest for a background search's (Note [background search]).
  virtual void set_priority(bool foreground) const = 0;
  // Waits for every queued kernel; a failure that showed only now is a DeviceError.
  virtual void synchronize() const = 0;
  // Whether the work queued now is being recorded into a graph (capture) rather than run.
  virtual bool capturing() const = 0;
  // The device's total memory in bytes: no tensor of a model may need more (Note [absurd sizes]
  // in runtime/size_check.h).
  virtual size_t total_memory() const = 0;
  // The device as messages about that memory name it: "cuda:0", or "cuda:0 (memory_limit=...)".
  virtual std::string memory_name() const = 0;

  // Device runs (Note [device runs] in runtime/device_runner.cc).
  // Records what `enqueue` queues without running it; nullptr where the device has no graphs.
  // With `edges`, room for that many edge copies before and after it (DeviceGraph::launch).
  virtual std::unique_ptr<DeviceGraph> capture(const std::function<void()>& enqueue, GraphEdges edges) const = 0;
  std::unique_ptr<DeviceGraph> capture(const std::function<void()>& enqueue) const { return capture(enqueue, {}); }
  // A timer with `marks` marks (one per layer, and one after the last), on the device's clock.
  virtual std::unique_ptr<LayerTimer> layer_timer(size_t marks) const = 0;
  // The device ordinal it runs on, and the one `ptr` points into (-1 when not device memory).
  virtual int device_index() const = 0;
  virtual int device_of(const void* ptr) const = 0;
  // External streams are CUDA stream handles as integers, as DLPack and __cuda_array_interface__
  // pass them (1: the legacy default stream, 2: the per-thread default stream).
  // Makes the device's later work wait for what is queued now on `stream`.
  virtual void wait_for_stream(uintptr_t stream) const = 0;
  // The stream a producer of device inputs is asked to order its writes before (DLPack's
  // __dlpack__(stream=...)); every run waits for it first.
  virtual uintptr_t import_stream() const = 0;
  // Memory for arrays handed to the caller (Model.run(output="device")), taken in the stream's
  // order from a pool, so that a run pays neither cudaMalloc nor cudaFree (which waits for the
  // whole device). release_array (given the size allocate_array was asked for) frees it once the
  // device's queued work and the work queued now on each of `readers` (external streams) are done.
  virtual void* allocate_array(size_t bytes) const = 0;
  virtual void release_array(void* ptr, size_t bytes, const std::vector<uintptr_t>& readers) const noexcept = 0;

  // Host layers inside a device plan (Note [host fallback] in runtime/host_fallback.h): page-locked
  // host memory, a copy into it queued in stream order (copy_to_device from it is queued too),
  // and host work queued in stream order. All three record into graphs like the kernels do.
  virtual void* allocate_pinned(size_t bytes) const = 0;
  virtual void release_pinned(void* ptr) const noexcept = 0;
  virtual void queue_copy_to_host(void* pinned, const void* src, size_t bytes) const = 0;
  // Runs (*work)() on a host thread once the work queued before it is done; the work queued after
  // it waits for it. *work outlives every run and replay that queued it; it must not call the device.
  virtual void queue_host_call(const std::function<void()>* work) const = 0;
};

// The device services of a backend the caller knows to be a device one; DeviceError naming the
// backend (`what` is the operation asked for) when it is a host backend.
const DeviceServices& device_services(const Backend& backend, const char* what);

}  // namespace dnnx
