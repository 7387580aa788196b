"""Compiling a pipeline of torchvision v2 transforms (or conveyor.transforms') into an ImageAugment:
what each transform becomes, and the ConfigError that names the first one conveyor cannot run,
where it is and why. (That the result equals torchvision is tests/parity/test_compose.py's claim.)"""
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
    (T.Compose([T.Resize(256)]), r"the Resize at transform 0 needs a CenterCrop after it"),
    (T.Compose([T.ToImage(), T.ToDtype("float32", scale=True)]), r"comes before any crop"),
    (T.Compose([T.PILToTensor()]), r"the pipeline has no crop"),
    (T.Compose([T.RandomResizedCrop((224, 160))]), r"transform 0 \(RandomResizedCrop\): conveyor's crops are square"),
    (T.Compose([T.RandomResizedCrop(224, interpolation="nearest")]),
     r"bilinear interpolation and antialiasing only, got interpolation=nearest"),
    (T.Compose([T.Resize((256, 300)), T.CenterCrop(224)]), r"shorter side to one size"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float16", scale=True)]), r"to float32 with scale=True"),
    (T.Compose([T.CenterCrop(224), T.ToDtype("float32")]), r"got dtype=float32, scale=False"),
    (T.Compose([T.CenterCrop(224), T.Normalize(MEAN, STD)]), r"transform 1 \(Normalize\) needs a float image"),
    (T.Compose([T.CenterCrop(224), T.RandomApply([T.CenterCrop(100)])]), r"transform 1 \(RandomApply\): CenterCrop cannot be inside it"),
    (T.Compose([T.CenterCrop(224), T.Compose([T.RandomInvert(), T.CenterCrop(100)])]),
     r"transform 1, transform 1 \(CenterCrop\): conveyor crops once, first"),
])
def test_what_conveyor_cannot_run_is_named_with_where_and_why(pipeline, message):
    with pytest.raises(conveyor.ConfigError, match=message):
        conveyor.ImageAugment.from_transforms(pipeline)


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

    def test_a_lambda_is_refused_by_position_and_why(self):
        v2 = self.v2
        pipeline = v2.Compose([v2.RandomResizedCrop(224), v2.RandomHorizontalFlip(), v2.Lambda(lambda x: x)])
        with pytest.raises(conveyor.ConfigError,
                           match=r"^transform 2 \(Lambda\) cannot run in conveyor: conveyor's workers run C\+\+"):
            conveyor.Loader(conveyor.InMemory(), transform=pipeline)

    def test_an_op_conveyor_lacks_and_v1_transforms_are_refused_by_name(self):
        v2 = self.v2
        with pytest.raises(conveyor.ConfigError, match=r"^transform 1 \(RandomPerspective\) cannot run in conveyor: "
                                                       r"conveyor has no such transform"):
            conveyor.ImageAugment.from_transforms(v2.Compose([v2.CenterCrop(224), v2.RandomPerspective()]))
        import torchvision.transforms as v1
        with pytest.raises(conveyor.ConfigError, match=r"the pipeline \(Compose\) is from "
                                                       r"torchvision.transforms \(v1\).*use torchvision.transforms.v2"):
            conveyor.ImageAugment.from_transforms(v1.Compose([v1.RandomResizedCrop(224)]))


def test_each_pixel_transform_becomes_the_cpp_transform_of_its_name():
    made = [T.RandomHorizontalFlip(), T.RandomVerticalFlip(), T.ColorJitter(0.1), T.Grayscale(), T.RandomGrayscale(),
            T.RandomInvert(), T.RandomPosterize(4), T.RandomSolarize(128), T.RandomAdjustSharpness(2),
            T.RandomAutocontrast(), T.RandomEqualize(), T.GaussianBlur(5), T.RandomRotation(10),
            T.RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5), T.TrivialAugmentWide(),
            T.RandAugment(), T.AutoAugment("svhn"), T.RandomErasing(), T.RandomApply([T.RandomInvert()])]
    assert {type(t) for t in made} == set(T._PIXEL_TRANSFORMS)
    for t in made:
        assert t._native().name == type(t).__name__
