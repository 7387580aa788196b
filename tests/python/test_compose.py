"""Compiling a pipeline of torchvision v2 transforms (or conveyor.transforms') into an ImageAugment:
what each transform becomes, and the ConfigError that names the first one conveyor cannot run,
where it is and why. (That the result equals torchvision is tests/parity/test_compose.py's claim.)"""
import dataclasses
import pytest

import conveyor
from conveyor import transforms as T

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def test_the_eval_recipe_is_the_eval_preset_without_dct_scaling():
    a = conveyor.ImageAugment.from_transforms(T.Compose([
        T.Resize(256), T.CenterCrop(224), T.PILToTensor(), T.ToDtype("float32", scale=True), T.Normalize(MEAN, STD)]))
    assert (a.crop, a.resize, a.size, a.flip, a.dtype) == ("center", 256, 224, 0.0, "f32")
    assert a.normalize == (list(MEAN), list(STD))
    assert a.decode_scaling is False and a.torchvision_rounding is True and list(a.transforms) == []


def test_the_train_recipe_keeps_the_flip_in_the_crop_and_the_rest_in_order():
    jitter, erasing = T.ColorJitter(0.4, 0.4, 0.4), T.RandomErasing(0.25)
    a = conveyor.ImageAugment.from_transforms(T.Compose([
        T.RandomResizedCrop(176, scale=(0.25, 1.0)), T.RandomHorizontalFlip(0.3), jitter, T.RandomHorizontalFlip(),
        T.ToImage(), T.ToDtype("float32", scale=True), T.Normalize([0.5], [0.25]), erasing]))
    assert (a.crop, a.size, a.scale, a.flip, a.dtype) == ("random_resized", 176, (0.25, 1.0), 0.3, "f32")
    assert a.normalize == ([0.5] * 3, [0.25] * 3)
    assert list(a.transforms) == [jitter, T.RandomHorizontalFlip(), erasing]
    # A last cast to a 16-bit float is the stored dtype, before or after the erasing.
    for tail in ([T.Normalize(MEAN, STD), T.ToDtype("bfloat16"), erasing], [erasing, T.ToDtype("float16", scale=True)]):
        half = conveyor.ImageAugment.from_transforms(T.Compose([T.CenterCrop(64), T.ToDtype("float32", scale=True), *tail]))
        assert (half.dtype, list(half.transforms)) == ("bf16" if tail[0] is not erasing else "f16", [erasing])
    # Without ToDtype the output stays uint8, normalised by nothing.
    u8 = conveyor.ImageAugment.from_transforms(T.Compose([T.CenterCrop(64), T.RandomInvert()]))
    assert (u8.dtype, u8.normalize, u8.resize) == ("u8", None, None)


@pytest.mark.parametrize("pipeline,message", [
    (T.Compose([T.RandomResizedCrop(224), T.RandomErasing(), T.ColorJitter(0.4)]),
     r"transform 2 \(ColorJitter\) comes after RandomErasing, which conveyor runs on the output"),
    (T.Compose([T.RandomResizedCrop(224), T.ToDtype("float32", scale=True), T.RandomInvert()]),
     r"transform 2 \(RandomInvert\) after ToDtype: conveyor runs pixel transforms on uint8 images"),
    (T.Compose([T.ColorJitter(0.4), T.RandomResizedCrop(224)]), r"transform 0 \(ColorJitter\) comes before any crop"),
    (T.Compose([T.Resize(256), T.RandomHorizontalFlip()]),
     r"transform 1 \(RandomHorizontalFlip\) after Resize \(transform 0\): conveyor needs a CenterCrop"),
    (T.Compose([T.Resize(256)]), r"the Resize at transform 0 needs a CenterCrop or a RandomCrop after it"),
    (T.Compose([T.ToImage(), T.ToDtype("float32", scale=True)]), r"comes before any crop"),
    (T.Compose([T.PILToTensor()]), r"the pipeline has no crop"),
    (T.Compose([T.RandomResizedCrop((224, 160, 3))]),
     r"transform 0 \(RandomResizedCrop\): size must be an int or \(height, width\), got \(224, 160, 3\)"),
    (T.Compose([T.Resize((256, 300)), T.RandomHorizontalFlip(), T.CenterCrop(224)]),
     r"transform 2 \(CenterCrop\): conveyor crops once, first"),
    (T.Compose([T.Resize(None, max_size=300)]), r"the Resize at transform 0 needs a CenterCrop or a RandomCrop"),
    (T.Compose([T.RandomCrop(32, padding=4, fill=(0, 9, 0))]),
     r"^transform 0 \(RandomCrop\): conveyor's constant padding is zeros \(fill=0\), got fill=\(0, 9, 0\)"),
    (T.Compose([T.Pad(4), T.CenterCrop(32)]),
     r"^transform 0 \(Pad\): conveyor pads as a RandomCrop right after it does \(its padding\), and transform 1 "
     r"\(CenterCrop\) follows it"),
    (T.Compose([T.Resize(36), T.Pad(4)]), r"^transform 1 \(Pad\): conveyor pads as a RandomCrop .* none follows"),
    (T.Compose([T.CenterCrop(32), T.Pad(4)]), r"^transform 1 \(Pad\): conveyor pads before its crop"),
    (T.Compose([T.Pad(4, padding_mode="reflect"), T.RandomCrop(32, pad_if_needed=True)]),
     r"^transform 0 \(Pad, padding_mode='reflect'\) and transform 1 \(RandomCrop, padding_mode='constant'\) pad twice"),
    (T.Compose([T.Pad(4, fill=3), T.RandomCrop(32)]), r"^transform 0 \(Pad\): conveyor's constant padding is zeros"),
    (T.Compose([T.Resize(256), T.TenCrop(224), T.ToDtype("float32", scale=True)]),
     r"^transform 1 \(TenCrop\) makes 10 images of each: give the pipeline to a Loader's transform="),
    (T.Compose([T.Resize(64, interpolation="lanczos"), T.CenterCrop(64)]),
     r"transform 0 \(Resize\): conveyor resizes with bilinear, bicubic, nearest, nearest-exact, bilinear "
     r"\(antialias=False\), bicubic \(antialias=False\) on tensors .* got interpolation=lanczos, antialias=True"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float16", scale=True)]), r"to float32 with scale=True"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float32")]), r"got dtype=float32, scale=False"),
    (T.Compose([T.CenterCrop(224), T.Normalize(MEAN, STD)]), r"transform 1 \(Normalize\) needs a float image"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float32", scale=True), T.ToDtype("bfloat16"), T.Normalize(MEAN, STD)]),
     r"transform 3 \(Normalize\) comes after the ToDtype to bf16, which conveyor runs as it stores the output: only "
     r"RandomErasing may follow it"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float32", scale=True), T.RandomErasing(), T.ToDtype("float16"),
                T.ToDtype("bfloat16")]), r"transform 4 \(ToDtype\) comes after RandomErasing"),
    (T.Compose([T.CenterCrop(224), T.RandomApply([T.CenterCrop(100)])]), r"transform 1 \(RandomApply\): CenterCrop cannot be inside it"),
    (T.Compose([T.CenterCrop(224), T.Compose([T.RandomInvert(), T.CenterCrop(100)])]),
     r"transform 1, transform 1 \(CenterCrop\): conveyor crops once, first"),
    (T.Compose([T.CenterCrop(224), T.RandomChoice([T.RandomInvert(), T.CenterCrop(100)])]),
     r"transform 1 \(RandomChoice\): CenterCrop cannot be inside it: conveyor applies only pixel transforms"),
    (T.Compose([T.CenterCrop(224), T.RandomOrder([T.RandomInvert(), T.Compose([T.RandomResizedCrop(100)])])]),
     r"transform 1 \(RandomOrder\): RandomResizedCrop cannot be inside it"),
    (T.Compose([T.CenterCrop(224), T.RandomChoice([T.RandomInvert(), T.ToDtype("float32", scale=True)])]),
     r"transform 1 \(RandomChoice\): ToDtype cannot be inside it"),
    (T.Compose([T.CenterCrop(224), T.RandomOrder([T.RandomInvert(), T.RandomErasing()])]),
     r"transform 1, transform 1 \(RandomErasing\) cannot be inside RandomOrder \(transform 1\): conveyor erases "
     r"the normalised output, after every other transform, so erasing cannot take a random place in the order"),
    (T.Compose([T.CenterCrop(224), T.RandomOrder([T.Compose([T.RandomInvert(), T.RandomApply([T.RandomErasing()])])])]),
     r"transform 1, transform 0, transform 1 \(RandomApply\) cannot be inside RandomOrder \(transform 1\)"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float32", scale=True), T.RandomChoice([T.RandomErasing(), T.RandomInvert()])]),
     r"transform 2, transform 1 \(RandomInvert\) inside RandomChoice \(transform 2\): its transforms must all erase "
     r"or none, as conveyor erases the normalised output"),
    (T.Compose([T.CenterCrop(224), T.RandomChoice([T.RandomErasing(), T.Compose([T.RandomInvert(), T.RandomErasing()])])]),
     r"transform 1, transform 1 \(RandomApply\) inside RandomChoice \(transform 1\): its transforms must all erase"),
    (T.Compose([T.CenterCrop(224), T.RandomChoice([T.Compose([]), T.RandomInvert()])]),
     r"transform 1, transform 0 \(Compose\) is empty: each of RandomChoice's transforms \(transform 1\) must "
     r"transform the image"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float32", scale=True),
                T.RandomChoice([T.RandomErasing(), T.RandomErasing(value=1.0)]), T.RandomInvert()]),
     r"transform 3 \(RandomInvert\) comes after RandomErasing"),
])
def test_what_conveyor_cannot_run_is_named_with_where_and_why(pipeline, message):
    with pytest.raises(conveyor.ConfigError, match=message):
        conveyor.ImageAugment.from_transforms(pipeline)


def test_identity_runs_anywhere_and_is_a_choice_inside_random_choice():
    choice = T.RandomChoice([T.Identity(), T.RandomInvert(1.0)])
    a = conveyor.ImageAugment.from_transforms(T.Compose([
        T.Identity(), T.CenterCrop(32), T.Identity(), choice, T.ToDtype("float32", scale=True), T.RandomErasing(),
        T.Identity()]))
    assert list(a.transforms) == [choice, T.RandomErasing()]
    a._native()


def test_sizes_are_ints_or_height_width_and_a_resize_to_both_is_the_whole_output():
    def made(*steps):
        a = conveyor.ImageAugment.from_transforms(T.Compose(list(steps)))
        return a.crop, a.size, a.resize, a.max_size
    assert made(T.RandomResizedCrop((160, 224))) == ("random_resized", (160, 224), None, None)
    assert made(T.RandomResizedCrop([176])) == ("random_resized", 176, None, None)
    assert made(T.CenterCrop((100, 80))) == ("center", (100, 80), None, None)
    assert made(T.Resize((224, 224)), T.ToImage(), T.ToDtype("float32", scale=True)) == (
        "center", (224, 224), (224, 224), None)
    assert made(T.Resize((256, 300)), T.RandomInvert()) == ("center", (256, 300), (256, 300), None)
    assert made(T.Resize((256, 300)), T.CenterCrop(224)) == ("center", 224, (256, 300), None)
    assert made(T.Resize(256, max_size=320), T.CenterCrop((224, 192))) == ("center", (224, 192), 256, 320)
    a = conveyor.ImageAugment.from_transforms(T.Compose([T.Resize((24, 40)), T.ToImage()]))
    assert list(a._native().sample_shape) == [3, 24, 40]
    with pytest.raises(conveyor.ConfigError, match=r"max_size = 256 must be strictly greater than the requested size"):
        conveyor.ImageAugment.from_transforms(T.Compose([T.Resize(256, max_size=256), T.CenterCrop(224)]))._native()


def test_random_choice_and_random_order_hold_one_unit_per_transform():
    # A Compose among their transforms is one choice, or one place in the order: a RandomApply that
    # always applies, its nested Composes opened; a Compose of one transform is that transform.
    choice = T.RandomChoice([T.RandomInvert(), T.Compose([T.RandomGrayscale(), T.Compose([T.RandomSolarize(100)])]),
                             T.Compose([T.RandomEqualize()])], p=[1, 3, 0.5])
    order = T.RandomOrder([T.ColorJitter(0.2), T.Compose([T.RandomPosterize(3), T.RandomVerticalFlip()]),
                           T.RandomChoice([T.RandomAutocontrast(), T.RandomApply([T.RandomInvert()])])])
    erasing = T.RandomChoice([T.RandomErasing(), T.Compose([T.RandomErasing(value=1.0), T.RandomErasing(0.2)])])
    a = conveyor.ImageAugment.from_transforms(T.Compose([
        T.CenterCrop(64), choice, order, T.ToDtype("float32", scale=True), T.Normalize(MEAN, STD), erasing]))
    assert list(a.transforms) == [
        T.RandomChoice([T.RandomInvert(), T.RandomApply([T.RandomGrayscale(), T.RandomSolarize(100)], p=1.0),
                        T.RandomEqualize()], p=[1, 3, 0.5]),
        T.RandomOrder([T.ColorJitter(0.2), T.RandomApply([T.RandomPosterize(3), T.RandomVerticalFlip()], p=1.0),
                       T.RandomChoice([T.RandomAutocontrast(), T.RandomApply([T.RandomInvert()])])]),
        T.RandomChoice([T.RandomErasing(), T.RandomApply([T.RandomErasing(value=1.0), T.RandomErasing(0.2)], p=1.0)])]
    a._native()  # and the binding takes what they became


def test_random_choice_and_random_order_refuse_what_they_cannot_run():
    def native(t):
        return conveyor.ImageAugment(crop="center", size=32, transforms=[t])._native()
    with pytest.raises(conveyor.ConfigError, match=r"RandomChoice: p needs one weight per transform \(2\), got 1"):
        native(T.RandomChoice([T.RandomInvert(), T.RandomGrayscale()], p=[1.0]))
    with pytest.raises(conveyor.ConfigError, match=r"RandomChoice: p\[1\] must be finite and non negative, got -1"):
        native(T.RandomChoice([T.RandomInvert(), T.RandomGrayscale()], p=[1.0, -1.0]))
    with pytest.raises(conveyor.ConfigError, match=r"RandomChoice: p must have a positive, finite sum, got 0"):
        native(T.RandomChoice([T.RandomInvert(), T.RandomGrayscale()], p=[0, 0]))
    with pytest.raises(conveyor.ConfigError, match=r"RandomOrder: pass at least one transform"):
        native(T.RandomOrder([]))
    with pytest.raises(conveyor.ConfigError, match=r"RandomOrder: transforms\[0\] \(RandomErasing\) applies to the normalised"):
        native(T.RandomOrder([T.RandomErasing()]))
    with pytest.raises(conveyor.ConfigError, match=r"^RandomInvert: p must be in \[0, 1\]"):
        native(T.RandomChoice([T.RandomGrayscale(), T.RandomInvert(2.0)]))  # refused as it is made
    with pytest.raises(TypeError, match=r"RandomOrder: transforms\[1\] must be one of conveyor.transforms' classes"):
        native(T.RandomOrder([T.RandomInvert(), T.CenterCrop(3)]))


def test_gaussian_noise_meets_the_image_of_its_place():
    """Before ToDtype it adds uint8 noise, after it float noise (before Normalize); after Normalize
    (torchvision would add it to normalised values) it is refused with the place to move it to."""
    a = conveyor.ImageAugment.from_transforms(T.Compose([
        T.CenterCrop(64), T.GaussianNoise(sigma=0.2), T.RandomApply([T.GaussianNoise(), T.RandomInvert()]),
        T.ToDtype("float32", scale=True), T.GaussianNoise(mean=0.1), T.RandomApply([T.GaussianNoise(clip=False)]),
        T.Normalize(MEAN, STD), T.RandomErasing()]))
    got = list(a.transforms)
    assert [t.image for t in (got[0], got[1].transforms[0], got[2], got[3].transforms[0])] == [
        "uint8", "uint8", "float32", "float32"]
    assert (got[2].mean, got[3].transforms[0].clip) == (0.1, False)
    with pytest.raises(conveyor.ConfigError, match=r"transform 3 \(GaussianNoise\) after Normalize: conveyor adds "
                                                   r"noise to the float image between ToDtype and Normalize"):
        conveyor.ImageAugment.from_transforms(T.Compose([
            T.CenterCrop(64), T.ToDtype("float32", scale=True), T.Normalize(MEAN, STD), T.GaussianNoise()]))
    with pytest.raises(conveyor.ConfigError, match=r"image=\"float32\" adds noise after ToDtype, and a uint8 output"):
        conveyor.ImageAugment(crop="center", size=32, dtype="u8", transforms=[T.GaussianNoise()])._native()
    with pytest.raises(conveyor.ConfigError, match=r"GaussianNoise: on a uint8 image \|mean\| \+ 5.4 sigma must be <= 127"):
        conveyor.ImageAugment.from_transforms(T.Compose([T.CenterCrop(64), T.GaussianNoise(sigma=30.0)]))


def test_what_is_not_a_pipeline_is_a_type_error():
    with pytest.raises(TypeError, match=r"transform must be an ImageAugment, a RawTensor, or a torchvision"):
        conveyor.ImageAugment.from_transforms("train")
    with pytest.raises(TypeError, match=r"transforms\[0\] must be one of conveyor.transforms' classes"):
        conveyor.ImageAugment(transforms=[T.CenterCrop(3)])._native()


class TestTorchvision:
    v2 = None

    @pytest.fixture(autouse=True)
    def torchvision_v2(self):
        torch = pytest.importorskip("torch")
        pytest.importorskip("torchvision")
        v2 = pytest.importorskip("torchvision.transforms.v2")
        self.torch, self.v2 = torch, v2

    def test_a_torchvision_compose_reads_as_conveyors_names(self):
        v2, torch = self.v2, self.torch
        a = conveyor.ImageAugment.from_transforms(v2.Compose([
            v2.RandomResizedCrop(192), v2.RandomHorizontalFlip(),
            v2.RandomApply([v2.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8), v2.RandomGrayscale(p=0.2), v2.ToImage(),
            v2.ConvertImageDtype(torch.float32), v2.Normalize(MEAN, STD), v2.RandomErasing(value="random")]))
        assert (a.crop, a.size, a.flip, a.dtype) == ("random_resized", 192, 0.5, "f32")
        apply, gray, erasing = a.transforms
        assert isinstance(apply, T.RandomApply) and apply.p == 0.8
        assert apply.transforms == [T.ColorJitter((0.6, 1.4), (0.6, 1.4), (0.6, 1.4), (-0.1, 0.1))]
        assert gray == T.RandomGrayscale(0.2)
        assert isinstance(erasing, T.RandomErasing) and erasing.value == "random"  # v2 keeps it as None
        a._native()  # and the binding takes what they became

    def test_torchvisions_random_choice_and_random_order_become_conveyors(self):
        v2, torch = self.v2, self.torch
        a = conveyor.ImageAugment.from_transforms(v2.Compose([
            v2.RandomResizedCrop(96),
            v2.RandomChoice([v2.ColorJitter(0.4), v2.Compose([v2.RandomGrayscale(1.0), v2.RandomInvert(0.5)])], p=[1, 3]),
            v2.RandomOrder([v2.RandomSolarize(128), v2.RandomChoice([v2.RandomEqualize(), v2.RandomAutocontrast()])]),
            v2.ToImage(), v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD),
            v2.RandomChoice([v2.RandomErasing(value="random"), v2.RandomErasing(0.3, value=0.5)])]))
        choice, order, erasing = a.transforms
        # torchvision keeps the weights normalised; without p, equal.
        assert choice == T.RandomChoice([T.ColorJitter((0.6, 1.4)),
                                         T.RandomApply([T.RandomGrayscale(1.0), T.RandomInvert(0.5)], p=1.0)],
                                        p=[0.25, 0.75])
        assert order == T.RandomOrder([T.RandomSolarize(128), T.RandomChoice([T.RandomEqualize(), T.RandomAutocontrast()],
                                                                             p=[0.5, 0.5])])
        assert erasing == T.RandomChoice([T.RandomErasing(value="random"), T.RandomErasing(0.3, value=[0.5])], p=[0.5, 0.5])
        a._native()
        with pytest.raises(conveyor.ConfigError, match=r"transform 1, transform 1 \(RandomErasing\) cannot be inside "
                                                       r"RandomOrder \(transform 1\)"):
            conveyor.ImageAugment.from_transforms(v2.Compose([
                v2.CenterCrop(64), v2.RandomOrder([v2.RandomInvert(), v2.RandomErasing()])]))
        with pytest.raises(conveyor.ConfigError, match=r"transform 1 \(RandomChoice\): CenterCrop cannot be inside it"):
            conveyor.ImageAugment.from_transforms(v2.Compose([
                v2.CenterCrop(64), v2.RandomChoice([v2.RandomInvert(), v2.CenterCrop(32)])]))

    def test_a_lambda_is_refused_by_position_and_why(self):
        v2 = self.v2
        pipeline = v2.Compose([v2.RandomResizedCrop(224), v2.RandomHorizontalFlip(), v2.Lambda(lambda x: x)])
        with pytest.raises(conveyor.ConfigError,
                           match=r"^transform 2 \(Lambda\) cannot run in conveyor: conveyor's workers run C\+\+"):
            conveyor.Loader(conveyor.InMemory(), transform=pipeline)

    def test_to_tensor_divides_by_255_as_torchvision_to_tensor_does(self):
        v2, torch = self.v2, pytest.importorskip("torch")
        with_to_tensor = conveyor.ImageAugment.from_transforms(
            v2.Compose([v2.CenterCrop(224), v2.RandomInvert(), v2.ToTensor(), v2.Normalize(MEAN, STD)]))
        spelled_out = conveyor.ImageAugment.from_transforms(
            v2.Compose([v2.CenterCrop(224), v2.RandomInvert(), v2.ToImage(), v2.ToDtype(torch.float32, scale=True),
                        v2.Normalize(MEAN, STD)]))
        assert with_to_tensor.dtype == "f32" and with_to_tensor.divide_by_255 and not spelled_out.divide_by_255
        assert with_to_tensor == dataclasses.replace(spelled_out, divide_by_255=True)
        alone = conveyor.ImageAugment.from_transforms(T.Compose([T.CenterCrop(8), T.ToTensor()]))
        assert alone.dtype == "f32" and alone.normalize == ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))  # x / 255 itself
        with pytest.raises(conveyor.ConfigError, match=r"transform 2 \(RandomInvert\) after ToDtype"):
            conveyor.ImageAugment.from_transforms(v2.Compose([v2.CenterCrop(8), v2.ToTensor(), v2.RandomInvert()]))

    def test_other_libraries_transforms_are_refused_naming_their_library(self):
        processor = type("ViTImageProcessor", (), {"__call__": lambda self, x: x,
                                                   "__module__": "transformers.models.vit.image_processing_vit"})
        with pytest.raises(conveyor.ConfigError, match=r"^the pipeline \(ViTImageProcessor\) cannot run in conveyor: "
                                                       r"it is a Hugging Face image processor \(transformers\)"):
            conveyor.ImageAugment.from_transforms(processor())
        flip = type("HorizontalFlip", (), {"__call__": lambda self, x: x, "__module__": "albumentations.augmentations"})
        with pytest.raises(conveyor.ConfigError, match=r"^transform 1 \(HorizontalFlip\) cannot run in conveyor: it is "
                                                       r"from albumentations.augmentations, not torchvision"):
            conveyor.ImageAugment.from_transforms(self.v2.Compose([self.v2.CenterCrop(8), flip()]))
        with pytest.raises(conveyor.ConfigError, match=r"^the pipeline \(function\) cannot run in conveyor: conveyor's "
                                                       r"workers run C\+\+ without Python"):
            conveyor.ImageAugment.from_transforms(lambda x: x)

    def test_random_crop_takes_torchvisions_padding_in_f_pad_order(self):
        v2 = self.v2
        import torchvision.transforms as v1
        for padding in ([1, 2, 3, 4], 5, [6, 7]):
            ours = conveyor.ImageAugment.from_transforms(T.Compose([T.RandomCrop(32, padding=padding)]))
            for t in (v1.RandomCrop(32, padding=padding), v2.RandomCrop(32, padding=padding)):
                a = conveyor.ImageAugment.from_transforms(v2.Compose([t]), image_backend="tensor")
                assert (a.crop, a.size, a.padding, a.pad_if_needed) == ("random", 32, ours.padding, False)
        assert conveyor.ImageAugment.from_transforms(v2.Compose([v2.RandomCrop(32, padding=[1, 2, 3, 4])])).padding \
            == [1, 2, 3, 4]  # v2 keeps it as (left, right, top, bottom)

    def test_five_and_ten_crop_become_views_and_refuse_what_torchvision_draws_once_for_all(self):
        v2 = self.v2
        import torch
        views = conveyor._transforms.compiled_transform("Loader", v2.Compose([v2.Resize(64), v2.TenCrop(48)]), None)
        assert isinstance(views, conveyor.Views) and len(views.views) == 10
        assert [(v.crop, v.five_crop_of) for v in views.views[4:6]] == [("five_center", "image"),
                                                                        ("top_left", "horizontal_flip")]
        with pytest.raises(conveyor.ConfigError, match=r"^transform 2 \(ColorJitter\) after transform 1 \(FiveCrop\): "
                                                       r"torchvision runs it once for all the crops"):
            conveyor._transforms.compiled_transform(
                "Loader", v2.Compose([v2.Resize(64), v2.FiveCrop(48), v2.ColorJitter(0.4),
                                      v2.ToDtype(torch.float32, scale=True)]), None)

    def test_a_pad_before_a_random_crop_is_its_padding_and_the_modes_carry(self):
        v2 = self.v2
        import torchvision.transforms as v1
        for tv in (v1, v2):
            a = conveyor.ImageAugment.from_transforms(tv.Compose([tv.Pad([1, 2, 3, 4], padding_mode="symmetric"),
                                                                  tv.RandomCrop(32)]))
            assert (a.crop, a.padding, a.padding_mode) == ("random", [1, 2, 3, 4], "symmetric")
            a = conveyor.ImageAugment.from_transforms(tv.Compose([tv.Pad(2, padding_mode="edge"),
                                                                  tv.RandomCrop(32, padding=1, padding_mode="edge")]))
            assert (a.padding, a.padding_mode) == ([3, 3, 3, 3], "edge")  # edges of edges: one pad
        with pytest.raises(conveyor.ConfigError, match=r"torchvision v1 pads padding=4 and then what pad_if_needed "
                                                       r"adds, each mirrored \('reflect'\)"):
            conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomCrop(40, padding=4, pad_if_needed=True,
                                                                            padding_mode="reflect")]))
        a = conveyor.ImageAugment.from_transforms(v2.Compose([v2.RandomCrop(40, padding=4, pad_if_needed=True,
                                                                            padding_mode="reflect")]))
        assert (a.padding, a.pad_if_needed, a.padding_mode) == ([4, 4, 4, 4], True, "reflect")  # v2 pads once

    def test_an_op_conveyor_lacks_and_a_v1_transform_it_cannot_run_are_refused_by_name(self):
        v2 = self.v2
        with pytest.raises(conveyor.ConfigError, match=r"^transform 1 \(ElasticTransform\) cannot run in conveyor: "
                                                       r"it is torchvision.transforms.v2.ElasticTransform, "
                                                       r"which conveyor does not run yet \(torchvision can apply it"):
            conveyor.ImageAugment.from_transforms(v2.Compose([v2.CenterCrop(224), v2.ElasticTransform()]))
        import torchvision.transforms as v1
        assert conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224)])).resampling == \
            "pil_bilinear"
        a = conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224), v1.RandomInvert()]))
        assert a.pil_transforms == 1  # on the PIL image: torchvision's PIL functional
        with pytest.raises(conveyor.ConfigError, match=r"transform 1 \(GaussianBlur\) is torchvision v1's "
                                                       r"\(torchvision.transforms\).*v2.GaussianBlur after ToImage"):
            conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224), v1.GaussianBlur(3)]))
        # v1's RandomAffine and policies run with v1's arithmetic (their `v1`), v2's with v2's
        for tv in (v1, v2):
            a = conveyor.ImageAugment.from_transforms(tv.Compose([tv.RandomResizedCrop(224), tv.RandomAffine(10),
                                                                  tv.TrivialAugmentWide(), tv.RandAugment(),
                                                                  tv.AutoAugment()]), image_backend="pil")
            assert [t.v1 for t in a.transforms] == [tv is v1] * 4


def test_each_pixel_transform_becomes_the_cpp_transform_of_its_name():
    # a value for each required argument, by its name: every registered transform is made with them
    required = {"bits": 4, "threshold": 128, "sharpness_factor": 2, "kernel_size": 5, "degrees": 10,
                "transforms": [T.RandomInvert()]}
    for cls in T._PIXEL_TRANSFORMS:
        fields = dataclasses.fields(cls)
        t = cls(**{f.name: required[f.name] for f in fields if f.default is dataclasses.MISSING})
        assert t._native().name == cls.__name__
