#pragma once
// Outputs of torchvision 0.29 (torch 2.15, CPU) for ops whose branches a random image may never
// tell apart, for the CPU executor's and the kernel's tests alike: adjust_hue on colours whose
// shifted hues fall in each of the six sectors of its HSV round trip, their channels all distinct
// (so swapping two outputs of a sector changes the result), and equalize on an image whose
// brightest value holds most of the pixels (its step leaves that bin out). Printed by:
//
//   img = torch.tensor(HUE_COLOURS, dtype=torch.uint8).T.reshape(3, 1, 12)
//   [F.adjust_hue(img, f).reshape(3, -1).T.tolist() for f in HUE_FACTORS]
//   F.equalize(equalize_image())  # 0..199 twice each, then 200 300 times: v -> min(2 v, 255)

#include <array>
#include <cstdint>
#include <vector>

namespace conveyor_test::torchvision_values {

using Rgb = std::array<int, 3>;

inline constexpr std::array<Rgb, 12> hue_colours{{{200, 120, 40}, {230, 60, 90}, {150, 210, 30}, {90, 220, 120},
                                                  {40, 170, 230}, {20, 80, 210}, {160, 40, 220}, {240, 30, 200},
                                                  {255, 254, 0}, {1, 0, 255}, {128, 127, 126}, {17, 255, 128}}};
inline constexpr std::array<double, 6> hue_factors{0.0, 0.08, -0.25, 0.5, -0.45, 0.3};
/// adjust_hue(hue_colours, hue_factors[k]).
inline constexpr std::array<std::array<Rgb, 12>, 6> hue_adjusted{{
    {{{200, 120, 40}, {230, 60, 90}, {150, 210, 30}, {90, 220, 120}, {40, 170, 230}, {20, 80, 210},
      {160, 40, 220}, {240, 30, 200}, {255, 254, 0}, {1, 0, 255}, {128, 127, 126}, {17, 255, 128}}},
    {{{200, 197, 40}, {230, 112, 60}, {63, 210, 30}, {90, 220, 183}, {40, 79, 230}, {51, 20, 210},
      {220, 40, 194}, {240, 30, 99}, {134, 255, 0}, {123, 0, 255}, {128, 128, 126}, {17, 255, 243}}},
    {{{200, 40, 200}, {115, 60, 230}, {210, 30, 60}, {220, 185, 90}, {75, 230, 40}, {20, 210, 55},
      {40, 190, 220}, {30, 95, 240}, {255, 0, 129}, {0, 255, 129}, {128, 126, 128}, {255, 247, 17}}},
    {{{40, 120, 200}, {60, 230, 200}, {90, 30, 210}, {220, 90, 190}, {230, 100, 40}, {210, 150, 20},
      {100, 220, 40}, {30, 240, 70}, {0, 1, 255}, {254, 255, 0}, {126, 127, 128}, {255, 17, 144}}},
    {{{40, 72, 200}, {60, 209, 230}, {144, 30, 210}, {220, 90, 151}, {230, 157, 40}, {210, 207, 20},
      {46, 220, 40}, {30, 240, 133}, {75, 0, 255}, {178, 255, 0}, {126, 126, 128}, {255, 17, 72}}},
    {{{40, 200, 88}, {124, 230, 60}, {30, 186, 210}, {94, 90, 220}, {230, 40, 208}, {210, 20, 118},
      {220, 124, 40}, {240, 238, 30}, {0, 255, 203}, {255, 0, 50}, {126, 128, 127}, {80, 17, 255}}},
}};

/// The values of the equalize case, one per pixel: 0..199 twice each, then 200 300 times.
inline std::vector<int> equalize_values() {
  std::vector<int> v;
  for (int x = 0; x < 200; ++x) v.insert(v.end(), {x, x});
  v.insert(v.end(), 300, 200);
  return v;
}
/// What equalize makes of value `v` of that image: 400 pixels below the brightest, a step of 1.
inline int equalized(int v) { return v < 128 ? 2 * v : 255; }

}  // namespace conveyor_test::torchvision_values
