"""Hugging Face image processors given to conveyor.Loader as its transform, against the processor
itself: each image's batch entry equals `processor(Image.open(path).convert("RGB"),
return_tensors="pt")["pixel_values"][0]` bit for bit, for the default configurations of the
processors conveyor reads (built offline: no weights, no hub) and variations of their options.
transformers from PyPI beside the package:

    python -m pytest tests/parity/test_hf_processors.py
"""
import pathlib

import pytest

from reference import require

torch, torchvision = require()
transformers = pytest.importorskip("transformers")
PIL = pytest.importorskip("PIL.Image")
import conveyor  # noqa: E402

BILINEAR, BICUBIC, NEAREST = 2, 3, 0
PROCESSORS = {
    "ViT": lambda: transformers.ViTImageProcessor(),
    "CLIP": lambda: transformers.CLIPImageProcessor(),
    "SigLIP": lambda: transformers.SiglipImageProcessor(),
    "DINOv2 (BiT)": lambda: transformers.BitImageProcessor(size={"shortest_edge": 256}, crop_size=224,
                                                           image_mean=[0.485, 0.456, 0.406],
                                                           image_std=[0.229, 0.224, 0.225]),
    "ConvNeXt 384": lambda: transformers.ConvNextImageProcessor(),
    "ConvNeXt 224 (crop_pct)": lambda: transformers.ConvNextImageProcessor(size={"shortest_edge": 224}),
    # options: an odd crop margin's truncated offset, a rectangle, rescale without normalisation, neither
    "CLIP 201 crop, nearest": lambda: transformers.CLIPImageProcessor(crop_size=201, size={"shortest_edge": 230},
                                                                      resample=NEAREST),
    "ViT 150 x 190 bilinear, rescale only": lambda: transformers.ViTImageProcessor(size={"height": 150, "width": 190},
                                                                                 do_normalize=False),
    "ViT raw": lambda: transformers.ViTImageProcessor(do_rescale=False, do_normalize=False),
    "ViT normalise only": lambda: transformers.ViTImageProcessor(do_rescale=False, image_mean=[120.0, 110.5, 100.25],
                                                                 image_std=[60.0, 61.0, 62.0]),
    # the PIL backend's classes: Pillow's resize (every filter), numpy's rescale and normalisation
    "ViT (PIL)": lambda: transformers.ViTImageProcessorPil(),
    "CLIP (PIL)": lambda: transformers.CLIPImageProcessorPil(),
    "SigLIP (PIL)": lambda: transformers.SiglipImageProcessorPil(),
    "DINOv2 (BiT, PIL)": lambda: transformers.BitImageProcessorPil(size={"shortest_edge": 256}, crop_size=224,
                                                                   image_mean=[0.485, 0.456, 0.406],
                                                                   image_std=[0.229, 0.224, 0.225]),
    "ConvNeXt 224 (crop_pct, PIL)": lambda: transformers.ConvNextImageProcessorPil(size={"shortest_edge": 224}),
    "CLIP 201 crop, lanczos (PIL)": lambda: transformers.CLIPImageProcessorPil(crop_size=201,
                                                                               size={"shortest_edge": 230}, resample=1),
    "ViT box, rescale only (PIL)": lambda: transformers.ViTImageProcessorPil(resample=4, do_normalize=False),
    "ViT hamming, normalise only (PIL)": lambda: transformers.ViTImageProcessorPil(
        resample=5, do_rescale=False, image_mean=[120.0, 110.5, 100.25], image_std=[60.0, 61.0, 62.0]),
}


@pytest.mark.parametrize("name", sorted(PROCESSORS))
def test_a_processor_gives_its_own_pixel_values(photos, name):
    processor = PROCESSORS[name]()
    dataset = conveyor.ImageFolder(str(photos))
    files = [pathlib.Path(dataset.name(i)) for i in range(len(dataset))]
    (images, _), = list(conveyor.Loader(dataset, batch_size=len(files), workers=2, transform=processor))
    for index, path in enumerate(files):
        with PIL.open(path) as image:
            expected = processor(image.convert("RGB"), return_tensors="pt")["pixel_values"][0]
        assert images[index].dtype == expected.dtype, path.name
        assert images[index].shape == expected.shape, path.name
        assert torch.equal(images[index], expected), (
            f"{path.name}: {(images[index].double() - expected.double()).abs().max()} off")


def test_the_odd_margin_is_where_the_offsets_differ():
    """The case the truncated offset exists for: a margin of 7 is 3 in transformers, 4 in torchvision."""
    image = torch.arange(3 * 10 * 13, dtype=torch.uint8).reshape(3, 10, 13)
    processor = transformers.CLIPImageProcessor(do_resize=False, crop_size={"height": 3, "width": 6},
                                                do_normalize=False, do_rescale=False)
    theirs = processor(image, return_tensors="pt")["pixel_values"][0]
    assert torch.equal(theirs, image[:, 3:6, 3:9])
    assert not torch.equal(theirs, torchvision.transforms.v2.functional.center_crop(image, [3, 6]))


def test_what_conveyor_does_not_run_is_refused_naming_the_way():
    for processor, message in [
        (transformers.ViTImageProcessorPil(rescale_factor=1 / 127.5),
         r"ViTImageProcessorPil\): rescale_factor=0.00784313725490196: conveyor runs the PIL backend's float64 "
         r"rescale for 1/255 only"),
        (transformers.ViTImageProcessor(resample=1), r"resample=LANCZOS on tensors"),
        (transformers.CLIPImageProcessor(do_center_crop=False), r"without do_center_crop its images keep sizes"),
        (transformers.ViTImageProcessor(do_pad=True), r"do_pad=True is not run"),
        (transformers.MobileViTImageProcessor(), r"a Hugging Face image processor conveyor does not run yet"),
    ]:
        with pytest.raises(conveyor.ConfigError, match=message):
            conveyor.ImageAugment.from_transforms(processor)


def test_a_preprocessor_serves_a_processors_pixel_values(photos):
    """The serving path: conveyor.Preprocessor(transform=processor) on encoded requests."""
    processor = transformers.CLIPImageProcessor()
    dataset = conveyor.ImageFolder(str(photos))
    files = [pathlib.Path(dataset.name(i)) for i in range(min(8, len(dataset)))]
    batch = conveyor.Preprocessor(transform=processor)([f.read_bytes() for f in files])
    for k, path in enumerate(files):
        with PIL.open(path) as image:
            expected = processor(image.convert("RGB"), return_tensors="pt")["pixel_values"][0]
        assert torch.equal(batch[k], expected), path.name
