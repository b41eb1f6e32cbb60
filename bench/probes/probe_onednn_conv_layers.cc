// oneDNN conv timings for the shapes of probe_mobilenet_conv_layers_cpu.py (bench/RESULTS.md, issue #38):
// NCHW fp32 activations (dnnx's layout) and oneDNN's own choice (format_tag::any: nChw16c, reorders not
// counted), weights in its chosen layout, 200 calls, median and min. Not built by the project; by hand:
//   pip download --no-deps onednn-cpu-gomp onednn-devel-cpu-gomp -d /tmp/onednn   (unzip both wheels)
//   g++ -O2 -std=c++17 probe_onednn_conv_layers.cc -I<devel>/include -L<lib> -ldnnl -Wl,-rpath,<lib>
//   OMP_NUM_THREADS=1 ./a.out
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include "oneapi/dnnl/dnnl.hpp"
using namespace dnnl;
struct Case { int c, m, h, k, s, groups; const char* what; };
int main() {
  engine eng(engine::kind::cpu, 0);
  stream st(eng);
  std::vector<Case> cases = {
    {32, 32, 112, 3, 1, 32, "dw 3x3 32x112"}, {96, 96, 112, 3, 2, 96, "dw 3x3/2 96x112"},
    {144, 144, 56, 3, 1, 144, "dw 3x3 144x56"}, {384, 384, 14, 3, 1, 384, "dw 3x3 384x14"},
    {960, 960, 7, 3, 1, 960, "dw 3x3 960x7"}, {240, 240, 28, 5, 1, 240, "dw 5x5 240x28"},
    {96, 96, 56, 7, 1, 96, "dw 7x7 96x56"},
    {32, 16, 112, 1, 1, 1, "pw 32->16 112"}, {16, 96, 112, 1, 1, 1, "pw 16->96 112"},
    {144, 24, 56, 1, 1, 1, "pw 144->24 56"}, {384, 64, 14, 1, 1, 1, "pw 384->64 14"},
    {960, 160, 7, 1, 1, 1, "pw 960->160 7"}, {320, 1280, 7, 1, 1, 1, "pw 320->1280 7"},
  };
  for (const Case& cs : cases) {
    const int pad = cs.k / 2, oh = (cs.h + 2 * pad - cs.k) / cs.s + 1;
    memory::dims src_d = {1, cs.c, cs.h, cs.h}, dst_d = {1, cs.m, oh, oh}, bias_d = {cs.m};
    memory::dims w_d = cs.groups > 1 ? memory::dims{cs.groups, cs.m / cs.groups, cs.c / cs.groups, cs.k, cs.k}
                                     : memory::dims{cs.m, cs.c, cs.k, cs.k};
    auto f32 = memory::data_type::f32;
    for (int blocked = 0; blocked < 2; ++blocked) {
      auto act = blocked ? memory::format_tag::any : memory::format_tag::nchw;
      auto src_md = memory::desc(src_d, f32, act), dst_md = memory::desc(dst_d, f32, act);
      auto w_md = memory::desc(w_d, f32, memory::format_tag::any), b_md = memory::desc(bias_d, f32, memory::format_tag::x);
      auto pd = convolution_forward::primitive_desc(eng, prop_kind::forward_inference, algorithm::convolution_direct,
                                                    src_md, w_md, b_md, dst_md, {cs.s, cs.s}, {pad, pad}, {pad, pad});
      memory src(pd.src_desc(), eng), w(pd.weights_desc(), eng), b(b_md, eng), dst(pd.dst_desc(), eng);
      std::fill((float*)src.get_data_handle(), (float*)src.get_data_handle() + pd.src_desc().get_size() / 4, 0.5f);
      std::fill((float*)w.get_data_handle(), (float*)w.get_data_handle() + pd.weights_desc().get_size() / 4, 0.1f);
      auto conv = convolution_forward(pd);
      std::vector<double> ts;
      for (int i = 0; i < 200; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        conv.execute(st, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst}});
        st.wait();
        ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ts.begin(), ts.end());
      std::printf("%-18s %s impl=%-28s median %.4f ms  min %.4f ms\n", cs.what, blocked ? "blocked(any)" : "nchw        ",
                  pd.impl_info_str(), ts[ts.size() / 2], ts[0]);
    }
  }
}
