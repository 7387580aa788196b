#pragma once
/// @file
/// The pixel transforms ImageAugment runs after its crop and flip, in the user's order: one type
/// list, and the variant a list element is. A new transform is its file (program_draw.hpp says
/// what it provides, fields.hpp how its arguments are declared) plus its include and its line in
/// `PixelTransforms`; nothing else names it. Its Python class, stubs and docs page, the fuzzers'
/// random instances and the tests that loop over the registry follow from the declaration.
/// RandomApply, RandomChoice and RandomOrder, which hold lists of them, are defined in
/// random_apply.hpp, random_choice.hpp and random_order.hpp (transforms/program.hpp includes
/// everything).

#include <conveyor/config.hpp>
#include <conveyor/transforms/aug_mix.hpp>
#include <conveyor/transforms/auto_augment.hpp>
#include <conveyor/transforms/color_jitter.hpp>
#include <conveyor/transforms/gaussian_blur.hpp>
#include <conveyor/transforms/gaussian_noise.hpp>
#include <conveyor/transforms/grayscale.hpp>
#include <conveyor/transforms/identity.hpp>
#include <conveyor/transforms/program_draw.hpp>
#include <conveyor/transforms/rand_augment.hpp>
#include <conveyor/transforms/random_adjust_sharpness.hpp>
#include <conveyor/transforms/random_affine.hpp>
#include <conveyor/transforms/random_autocontrast.hpp>
#include <conveyor/transforms/random_channel_permutation.hpp>
#include <conveyor/transforms/random_equalize.hpp>
#include <conveyor/transforms/random_erasing.hpp>
#include <conveyor/transforms/random_grayscale.hpp>
#include <conveyor/transforms/random_horizontal_flip.hpp>
#include <conveyor/transforms/random_invert.hpp>
#include <conveyor/transforms/random_perspective.hpp>
#include <conveyor/transforms/random_photometric_distort.hpp>
#include <conveyor/transforms/random_posterize.hpp>
#include <conveyor/transforms/random_rotation.hpp>
#include <conveyor/transforms/random_solarize.hpp>
#include <conveyor/transforms/random_vertical_flip.hpp>
#include <conveyor/transforms/timm_aug_mix.hpp>
#include <conveyor/transforms/timm_auto_augment.hpp>
#include <conveyor/transforms/timm_rand_augment.hpp>
#include <conveyor/transforms/timm_random_erasing.hpp>
#include <conveyor/transforms/trivial_augment_wide.hpp>

#include <variant>

namespace conveyor {
inline namespace v0 {

struct RandomApply;
struct RandomChoice;
struct RandomOrder;

template <class... Transforms>
struct TransformList {
  using Variant = std::variant<Transforms...>;
};

using PixelTransforms =
    TransformList<RandomHorizontalFlip, RandomVerticalFlip, ColorJitter, Grayscale, RandomGrayscale, RandomInvert,
                  RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize,
                  GaussianBlur, RandomRotation, RandomAffine, TrivialAugmentWide, RandAugment, AutoAugment,
                  RandomErasing, RandomApply, RandomChoice, RandomOrder, Identity,
                  RandomChannelPermutation, RandomPerspective, RandomPhotometricDistort, GaussianNoise,
                  TimmRandomErasing, TimmRandAugment, TimmAutoAugment, AugMix, TimmAugMix>;

/// One of the registered pixel transforms.
using PixelTransform = PixelTransforms::Variant;

}  // namespace v0
}  // namespace conveyor
