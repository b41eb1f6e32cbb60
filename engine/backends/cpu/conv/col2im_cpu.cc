// Col2Im on the CPU (ops/conv/col2im.h): Y zeroed, then every (tap, block position) of each
// channel adds its input value at the image position it lands on (none in the padding).
#include <algorithm>

#include "ops/conv/col2im.h"
#include "runtime/kernel_registry.h"

namespace dnnx {

namespace {

template <class T>
class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(Col2ImGeometry g) : g_(std::move(g)) {}

  void run(const KernelArgs& args) const override {
    const T* x = args.in<T>(0);
    T* y = args.out<T>(0);
    const size_t r = g_.image.size();
    const int64_t image_size = numel(g_.image), taps = numel(g_.block), positions = numel(g_.blocks);
    std::fill(y, y + g_.batch * g_.channels * image_size, T(0));
    std::vector<int64_t> tap(r), pos(r);
    for (int64_t nc = 0; nc < g_.batch * g_.channels; ++nc) {
      T* image = y + nc * image_size;
      for (int64_t k = 0; k < taps; ++k) {
        unravel(k, g_.block, tap);
        const T* row = x + (nc * taps + k) * positions;
        for (int64_t l = 0; l < positions; ++l) {
          unravel(l, g_.blocks, pos);
          int64_t at = 0;
          bool inside = true;
          for (size_t d = 0; d < r && inside; ++d) {
            const int64_t i = pos[d] * g_.strides[d] - g_.pads_begin[d] + tap[d] * g_.dilations[d];
            inside = i >= 0 && i < g_.image[d];
            at = at * g_.image[d] + i;
          }
          if (inside) image[at] += row[l];
        }
      }
    }
  }

 private:
  static void unravel(int64_t flat, const Shape& dims, std::vector<int64_t>& out) {
    for (size_t d = dims.size(); d-- > 0;) {
      out[d] = flat % dims[d];
      flat /= dims[d];
    }
  }

  Col2ImGeometry g_;
};

KernelChoice plan_col2im(const Node& node, const std::vector<ValueInfo>& inputs, const std::vector<TensorInfo>&) {
  KernelChoice choice;
  choice.algorithm = "direct";
  choice.kernel = std::make_unique<Col2ImKernel<float>>(col2im_geometry(node, inputs));
  return choice;
}

}  // namespace

void register_cpu_col2im_kernels(KernelRegistry& r) { r.add("Col2Im", plan_col2im); }

}  // namespace dnnx
