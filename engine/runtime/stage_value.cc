#include "runtime/stage_value.h"

#include <algorithm>

namespace dnnx {

DeviceTensor::DeviceTensor(DeviceRunner& runner, TensorInfo info)
    : runner_(runner), info_(std::move(info)), bytes_(std::max<size_t>(info_.bytes(), 1)),
      data_(runner_.allocate_array(bytes_)) {}

DeviceTensor::~DeviceTensor() { runner_.release_array(data_, bytes_, {}); }

ConstTensorPtr DeviceTensor::to_host() const {
  auto t = std::make_shared<ConstTensor>();
  t->info = info_;
  t->data.resize(info_.bytes());
  if (!t->data.empty()) runner_.array_to_host(t->data.data(), data_, t->data.size(), {});
  return t;
}

}  // namespace dnnx
