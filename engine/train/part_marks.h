// Marks a LayerTimer part by part through one step (Trainer::profile): next() before each part
// and once after the last, or parts(count) for a run of `count` parts that marks itself (the
// head's run_layers, the tail's forward and backward, which mark before each of their layers
// and once after the last: that closing mark is the next part's opening one, so it is dropped).
#pragma once
#include <cstddef>

#include "runtime/backend.h"

namespace dnnx {

class PartMarks {
 public:
  explicit PartMarks(LayerTimer& timer) : timer_(timer), run_(timer) {}

  void next() { timer_.mark(next_++); }
  // A timer for the next `count` parts; valid until the next call.
  LayerTimer* parts(size_t count) {
    run_.offset = next_;
    run_.count = count;
    next_ += count;
    return &run_;
  }

 private:
  struct Run final : LayerTimer {
    explicit Run(LayerTimer& timer) : base(timer) {}
    void mark(size_t i) override {
      if (i < count) base.mark(offset + i);
    }
    double elapsed_ms(size_t i) const override { return base.elapsed_ms(offset + i); }
    LayerTimer& base;
    size_t offset = 0, count = 0;
  };
  LayerTimer& timer_;
  Run run_;
  size_t next_ = 0;
};

}  // namespace dnnx
