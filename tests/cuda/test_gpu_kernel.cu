// The fused kernel against the CPU resampler, plan by plan, on fresh random plans and pixels: every
// dtype and layout, every filter the device resamples (torch's and Pillow's: signed and 22-bit
// weights, Pillow's columns-first order), source scales from upsampling to the per-pixel path,
// padding, flips of either axis, mirrored and transposed views, windows at every byte alignment,
// output sizes that are not whole tiles.
// Runs only where a GPU is (label gpu).

#include <conveyor/cuda/all.cuh>
#include <conveyor/ops/cpu/resample.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace conveyor;

namespace {

/// One axis of a random plan over `size` source pixels: a crop box inside it, a scale drawn
/// log-uniformly from [0.25, 5] (both sides of the separable path's 3.5), a sub-pixel origin,
/// and now and then an offset that pads the output.
ops::AxisPlan random_axis(CounterRng& rng, int size, int out) {
  ops::AxisPlan a;
  a.src_begin = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(size)));
  a.src_end = a.src_begin + 1 + static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(size - a.src_begin)));
  a.scale = std::exp(rng.uniform(std::log(0.25), std::log(5.0)));
  a.origin = rng.uniform(-0.5, 0.5);
  a.resized = out;
  if (rng.below(4) == 0) {  // padding on either side
    a.offset = static_cast<std::int32_t>(rng.below(21)) - 10;
    a.resized = out - static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(out)));
  }
  return a;
}

struct RandomBatch {
  std::vector<std::uint8_t> pixels;
  std::vector<ops::SamplePlan> plans;
};

/// `count` samples of `out_width` x `out_height` from sources of 1-700 pixels a side, each view
/// upright, mirrored or transposed, each starting at a random byte alignment.
RandomBatch random_batch(std::uint64_t seed, std::size_t count, int out_width, int out_height) {
  CounterRng rng(seed, 0, 0, RngOp::user);
  RandomBatch b;
  for (std::size_t i = 0; i < count; ++i) {
    const int w = 1 + static_cast<int>(rng.below(rng.below(4) == 0 ? 700 : 460));
    const int h = 1 + static_cast<int>(rng.below(rng.below(4) == 0 ? 700 : 460));
    const std::int64_t start = static_cast<std::int64_t>(b.pixels.size() + rng.below(4));
    b.pixels.resize(static_cast<std::size_t>(start) + std::size_t(w) * h * 3);
    for (std::size_t k = static_cast<std::size_t>(start); k < b.pixels.size(); ++k)
      b.pixels[k] = static_cast<std::uint8_t>(rng.next_u32());
    ops::SamplePlan p;
    p.out_width = out_width;
    p.out_height = out_height;
    p.flip = static_cast<std::int32_t>(rng.below(2));
    p.flip_y = static_cast<std::int32_t>(rng.below(2));
    switch (rng.below(4)) {
      case 0:  // mirrored: x runs right to left
        p.src = {start + std::int64_t{w - 1} * 3, -3, std::int64_t{w} * 3, w, h};
        break;
      case 1:  // transposed: the view's x is the buffer's y
        p.src = {start, std::int64_t{w} * 3, 3, h, w};
        break;
      default:
        p.src = {start, 3, std::int64_t{w} * 3, w, h};
    }
    p.x = random_axis(rng, p.src.width, out_width);
    p.y = random_axis(rng, p.src.height, out_height);
    if (rng.below(2) == 0) {  // half the default filter, half any filter the device resamples
      const auto filters = ops::enum_names(ops::Resampling{});
      p.x.filter = p.y.filter = static_cast<ops::Resampling>(rng.below(filters.size()));
      if (!ops::exact_on_device(p.x.filter)) p.x.filter = p.y.filter = ops::Resampling::pil_bicubic;
      if (rng.below(3) == 0) p.y.scale *= 3;  // Pillow filters columns first where the height shrinks more
    }
    b.plans.push_back(p);
  }
  return b;
}

/// The batch through `launch_layout` and `launch_augment`, copied back.
std::vector<std::byte> on_device(const RandomBatch& b, const ops::OutputParams& params, std::size_t sample_bytes) {
  const std::size_t count = b.plans.size();
  const int ow = b.plans[0].out_width, oh = b.plans[0].out_height;
  cuda::DeviceBuffer pixels(b.pixels.size()), plans(count * sizeof(ops::SamplePlan)),
      taps(cuda::kernels::TapTable::bytes(count, ow, oh)), out(count * sample_bytes);
  CONVEYOR_CUDA_TRY(cudaMemcpy(pixels.data(), b.pixels.data(), b.pixels.size(), cudaMemcpyHostToDevice));
  CONVEYOR_CUDA_TRY(cudaMemcpy(plans.data(), b.plans.data(), plans.size(), cudaMemcpyHostToDevice));
  CONVEYOR_CUDA_TRY(cudaMemset(out.data(), 0xA5, out.size()));
  cuda::Stream stream;
  const auto* plan_ptr = reinterpret_cast<const ops::SamplePlan*>(plans.data());
  cuda::kernels::launch_layout(plan_ptr, taps.data(), count, ow, oh, stream.get());
  cuda::kernels::launch_augment(pixels.data(), plan_ptr, taps.data(), out.data(), count, sample_bytes, params, ow, oh,
                                stream.get());
  std::vector<std::byte> host(out.size());
  CONVEYOR_CUDA_TRY(cudaMemcpyAsync(host.data(), out.data(), host.size(), cudaMemcpyDeviceToHost, stream.get()));
  CONVEYOR_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return host;
}

}  // namespace

TEST_CASE("the fused kernel equals the CPU resampler on random plans and pixels", "[gpu][kernel][kernels]") {
  const int sizes[][2] = {{224, 224}, {57, 131}, {1, 1}, {200, 3}};
  std::uint64_t seed = 40;
  for (auto [ow, oh] : sizes)
    for (DType dtype : {DType::u8, DType::f32, DType::f16, DType::bf16})
      for (Layout layout : {Layout::NCHW, Layout::NHWC})
        for (const bool torchvision_rounding : {false, true}) {
          if (dtype == DType::u8 && torchvision_rounding) continue;
          INFO("output " << ow << " x " << oh << ", " << to_string(dtype) << " " << to_string(layout) << ", seed "
                         << seed << (torchvision_rounding ? ", torchvision's roundings" : ""));
          const RandomBatch b = random_batch(++seed, 48, ow, oh);
          ops::OutputParams params;
          params.dtype = dtype;
          params.layout = layout;
          for (int c = 0; dtype != DType::u8 && c < 3; ++c) {  // arbitrary statistics, not ImageNet's
            const float mean = 0.3f + 0.1f * static_cast<float>(c), deviation = 0.2f + 0.01f * static_cast<float>(c);
            if (torchvision_rounding) {  // (v * (1/255) - mean) / std, as a compiled Compose's Normalize
              params.scale[c] = static_cast<float>(1.0 / 255.0);
              params.bias[c] = mean;
              params.divisor[c] = deviation;
            } else {
              params.scale[c] = 1.0f / (255.0f * deviation);
              params.bias[c] = -2.0f + static_cast<float>(c);
            }
          }
          const std::size_t sample_bytes = std::size_t(ow) * oh * 3 * dtype_size(dtype);
          const std::vector<std::byte> got = on_device(b, params, sample_bytes);
          ops::cpu::ResampleScratch scratch;
          std::vector<std::byte> expected(sample_bytes);
          for (std::size_t i = 0; i < b.plans.size(); ++i) {
            const ops::SamplePlan& p = b.plans[i];
            INFO("sample " << i << ": view " << p.src.width << " x " << p.src.height << " strides " << p.src.x_stride
                           << ", " << p.src.y_stride << ", scales " << p.x.scale << ", " << p.y.scale << ", filter "
                           << ops::enum_names(ops::Resampling{})[static_cast<std::size_t>(p.x.filter)]
                           << (ops::vertical_first(p) ? ", columns first" : ""));
            ops::cpu::resample(b.pixels.data(), p, params, expected.data(), scratch);
            REQUIRE(std::memcmp(got.data() + i * sample_bytes, expected.data(), sample_bytes) == 0);  // no tolerance
          }
        }
}
