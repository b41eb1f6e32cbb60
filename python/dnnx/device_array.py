"""``dnnx.DeviceArray``: an array in a CUDA model's GPU memory, as ``Model.run(x, output="device")``
and ``Model.to_device(x)`` return it.

    y = model.run(x_gpu, output="device")     # x_gpu: a torch CUDA tensor, a CuPy array, ...
    t = torch.from_dlpack(y)                  # no copy: PyTorch reads dnnx's memory
    c = cupy.asarray(y)                       # likewise, through __cuda_array_interface__
    y.numpy()                                 # a host copy

Lifetime (Note [device array lifetime] in python/bindings/device_array.h):
- the data is complete when the array is handed out: a run returns after its outputs are written;
- the memory is freed when the last reference goes: the DeviceArray itself, or a tensor made
  from it with DLPack (``torch.from_dlpack`` keeps the array alive). Each keeps its model alive;
- a DLPack consumer that names its stream (``torch.from_dlpack`` and ``cupy.from_dlpack`` do) is
  waited for: freed memory is reused only after the work queued on that stream by then. A reader
  through ``__cuda_array_interface__`` names no stream: keep a reference to the array until that
  reader's work has finished (``torch.cuda.synchronize()``, say).
"""
from ._native import core

DeviceArray = core.DeviceArray

__all__ = ["DeviceArray"]
