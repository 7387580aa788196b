"""conveyor.decode_image: the loader's decoder for one image, for checks and tools."""
from typing import Any, Union

from . import _args
from . import _conveyor


def decode_image(data: Union[bytes, bytearray, memoryview], lenient: bool = False,
                 max_image_pixels: int = 1 << 27, sixteen_bit: str = "refuse") -> Any:
    """Decodes a JPEG, PNG or binary PNM/PGM image at full size into an (H, W, 3) uint8 RGB numpy
    array, exactly as the Loader does before augmenting. Grey images are replicated to three
    channels, alpha is dropped. A 16-bit PNG raises a DecodeError (torchvision.io.decode_image
    gives uint16, which 8-bit samples cannot keep), unless sixteen_bit="high_byte" keeps each
    sample's high byte, as Pillow's convert("RGB") (torchvision's ImageFolder) does. A damaged
    image raises a DecodeError naming what is wrong (lenient=True accepts what libjpeg only warns
    about)."""
    import numpy

    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"decode_image: data must be bytes, got {type(data).__name__}")
    width, height, pixels = _conveyor.decode_image(
        bytes(data), _args.flag("decode_image", "lenient", lenient),
        _args.integer("decode_image", "max_image_pixels", max_image_pixels, 1, _args.UINT64_MAX),
        _args.choice("decode_image", "sixteen_bit", sixteen_bit, _conveyor.option_choices()["ImageAugment"]["sixteen_bit"]))
    return numpy.frombuffer(pixels, dtype=numpy.uint8).reshape(height, width, 3)
