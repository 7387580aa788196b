"""conveyor.Preprocessor: the request path for inference services."""
from typing import Any, Dict, Optional, Sequence

from . import _args
from . import _conveyor
from ._loader import Loader, _device_index, _stream_handle
from ._transforms import RawTensor, Views, compiled_transform


class Preprocessor:
    """Turns one request's encoded images into one normalised batch, on the CPU or ready on a
    CUDA stream, with the same workers, slots, streams and kernels as `Loader`:

        pre = conveyor.Preprocessor(max_images=32, lanes=4, workers=16, device="cuda")
        images = pre([jpeg_bytes, ...])       # a torch tensor [n, 3, 224, 224], from any thread

    `transform` defaults to `ImageAugment.eval()` (Resize 256, CenterCrop 224, normalize); a
    torchvision Compose (v2, or v1 on PIL images), or a Hugging Face image processor, is compiled as
    a Loader compiles it (`ImageAugment.from_transforms`, with `image_backend`). Up to
    `lanes` requests are prepared at once, each by its lane's `workers` threads (so up to
    `lanes * workers` threads exist; idle ones sleep). A call waits for a free lane; past
    `max_waiting` waiting calls it raises `Overloaded` at once, and past `timeout` seconds
    `DeadlineExceeded` (a `TimeoutError`), cancelling the request. A bad image raises `SampleError`
    with `.index` its position in the request; other requests are not affected. The images are
    read while the call lasts (bytes; other buffers are copied to bytes first). The tensor views
    the lane's memory: a lane holds `prefetch` batches, so `.clone()` what you keep for long.
    """

    def __init__(self, transform: Any = None, max_images: int = 32, lanes: int = 2,
                 max_waiting: int = 64, workers: int = -1, prefetch: int = 3, device: Any = "cpu",
                 stream: Any = None, decode: _args.Decode = "cpu", gpu_share: Optional[float] = None,
                 output: Optional[_args.Output] = None, gpu_upsampling: _args.GpuUpsampling = "interpolated",
                 image_backend: Optional[_args.ImageBackend] = None):
        who = "Preprocessor"
        if isinstance(transform, (RawTensor, Views, list)):
            raise _conveyor.ConfigError("Preprocessor: a request holds encoded images: use an ImageAugment or a Compose")
        self.transform = compiled_transform(who, transform, image_backend)
        self.max_images = _args.integer(who, "max_images", max_images, 0, _args.INT64_MAX)
        index = _device_index(who, device, False)
        self._impl = _conveyor.Preprocessor(
            self.transform._native(), max_images=self.max_images, lanes=_args.integer(who, "lanes", lanes, 0),
            max_waiting=_args.integer(who, "max_waiting", max_waiting, 0),
            workers=_args.integer(who, "workers", workers, -1), prefetch=_args.integer(who, "prefetch", prefetch, 2),
            device=index, stream=_stream_handle(who, stream), decode=_args.text(who, "decode", decode),
            gpu_share=_args.optional_real(who, "gpu_share", gpu_share),
            gpu_upsampling=_args.text(who, "gpu_upsampling", gpu_upsampling))
        self._convert = Loader._converter(output, index != -1)

    def __call__(self, images: Sequence[Any], timeout: Optional[float] = None) -> Any:
        """The batch of `images` (1 to max_images encoded images), within `timeout` seconds."""
        data = [b if isinstance(b, bytes) else bytes(b) for b in images]
        return self._convert(self._impl.run(data, _args.optional_real("Preprocessor", "timeout", timeout)).images)

    def stats(self) -> Dict[str, Any]:
        """Request outcomes, requests in flight and waiting, and the lanes' summed pipeline stats."""
        stats: Dict[str, Any] = self._impl.stats()
        return stats

    def metrics(self, **labels: str) -> str:
        """`stats()` in Prometheus' text exposition format, every sample labelled with `labels`."""
        return self._impl.prometheus(sorted((k, str(v)) for k, v in labels.items()))
