"""What a Python user reads when something is wrong: the message without the C++ source location
(kept in `.location`), the parameter named for a wrong type or an unknown choice, the GPU that
distributed="env" picked and why, and no noise from a loop that failed to start."""
import re
import subprocess
import sys
import textwrap
import warnings

import pytest

import conveyor

LOCATION = re.compile(r"^[\w.]+\.(hpp|cuh|h|cpp|cu):\d+$")
NANOBIND = ("incompatible function arguments", "Invoked with", "unpack", "__init__()")


@pytest.fixture
def data(samples):
    return conveyor.ImageFolder(str(samples))


def test_messages_keep_the_source_location_apart(data, tmp_path):
    with pytest.raises(conveyor.ConfigError) as config:
        conveyor.Loader(data, batch_size=0)
    assert str(config.value) == "BatchPipeline: batch_size must be > 0, got 0"
    assert LOCATION.match(config.value.location)
    with pytest.raises(conveyor.IoError) as io:
        conveyor.ImageFolder(tmp_path / "none")
    assert str(io.value).startswith("ImageFolder: ") and LOCATION.match(io.value.location)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "bad.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(conveyor.SampleError) as sample:
        next(iter(conveyor.Loader(str(tmp_path), batch_size=1, workers=1)))
    assert str(sample.value).startswith("sample 0 [") and ".hpp:" not in str(sample.value)
    assert ".hpp:" not in sample.value.reason and LOCATION.match(sample.value.location)
    with pytest.raises(conveyor.DecodeError) as decode:
        conveyor.decode_image(b"not an image")
    assert ".hpp:" not in str(decode.value) and LOCATION.match(decode.value.location)
    with pytest.raises(conveyor.Error) as plain:  # raised by the binding: no location to keep
        it = iter(conveyor.Loader(data, batch_size=2, prefetch=2, workers=1, output="dlpack"))
        kept = [next(it), next(it)]
        next(it)
    assert plain.value.location is None and "held by tensors" in str(plain.value)
    del kept


@pytest.mark.parametrize("make,parameter", [
    (lambda d: conveyor.Loader(d, batch_size="8"), "batch_size"),
    (lambda d: conveyor.Loader(d, shuffle="False"), "shuffle"),
    (lambda d: conveyor.Loader(d, workers=2.5), "workers"),
    (lambda d: conveyor.Loader(d, seed=None), "seed"),
    (lambda d: conveyor.Loader(d, stream="default"), "stream"),
    (lambda d: conveyor.Loader(d, gpu_share="half"), "gpu_share"),
    (lambda d: conveyor.Loader(d, decode=1), "decode"),
    (lambda d: conveyor.Loader(d, transform="train"), "transform"),
    (lambda d: conveyor.Loader(123), "dataset"),
    (lambda d: conveyor.Loader(d, transform=conveyor.ImageAugment(size="224")), "size"),
    (lambda d: conveyor.Loader(d, transform=conveyor.ImageAugment(scale=0.5)), "scale"),
    (lambda d: conveyor.Loader(d, transform=conveyor.RawTensor(shape=(2, "3"))), "shape"),
    (lambda d: conveyor.ImageFolder(123), "root"),
    (lambda d: conveyor.FileList(None), "path"),
    (lambda d: conveyor.TarShards(["a.tar"]), "pattern"),
    (lambda d: conveyor.InMemory().add("text", 0), "data"),
    (lambda d: conveyor.Preprocessor(max_images="32"), "max_images"),
])
def test_a_wrong_type_names_the_parameter(data, make, parameter):
    with pytest.raises(TypeError) as e:
        make(data)
    assert parameter in str(e.value)
    assert not any(noise in str(e.value) for noise in NANOBIND), str(e.value)


@pytest.mark.parametrize("make,message", [
    (lambda d: conveyor.ImageAugment(normalize="imagnet"), r"normalize must be 'imagenet', None or \(mean, std\)"),
    (lambda d: conveyor.ImageAugment(normalize=((0.5, 0.5, 0.5),)), r"normalize must be 'imagenet', None or"),
    (lambda d: conveyor.ImageAugment(normalize=([0.5] * 2, [0.2] * 3)), r"with 3 values each, got"),
    (lambda d: conveyor.ImageAugment(crop="centre"),
     r"crop must be one of 'random_resized', 'center', 'random', 'top_left', 'top_right', 'bottom_left', "
     r"'bottom_right', 'five_center', 'center_truncated', got 'centre'"),
    (lambda d: conveyor.ImageAugment(layout="chw"), r"layout must be one of 'nchw', 'nhwc', got 'chw'"),
])
def test_an_unknown_transform_choice_names_the_parameter_and_the_choices(data, make, message):
    with pytest.raises(conveyor.ConfigError, match=message) as e:
        conveyor.Loader(data, transform=make(data))
    assert not any(noise in str(e.value) for noise in NANOBIND)


@pytest.mark.parametrize("make,message", [
    (lambda d: conveyor.Loader(d, batch_size=-1), r"Loader: batch_size must be >= 0, got -1"),
    (lambda d: conveyor.Loader(d, batch_size=10**20), r"Loader: batch_size must be <= 2147483647, got 10{20}"),
    (lambda d: conveyor.Loader(d, seed=2**64), r"Loader: seed must be <= 18446744073709551615, got 18446744073709551616"),
    (lambda d: conveyor.Loader(d, seed=-1), r"Loader: seed must be >= 0, got -1"),
    (lambda d: conveyor.Loader(d, workers=2**40), r"Loader: workers must be <= 2147483647"),
    (lambda d: conveyor.Loader(d, memory_budget=2**70), r"Loader: memory_budget must be <= 18446744073709551615"),
    (lambda d: conveyor.InMemory().add(b"x", 2**63), r"InMemory.add: label must be <= 9223372036854775807"),
    (lambda d: conveyor.ImageAugment(size=2**31)._native(), r"ImageAugment: size must be <= 2147483647"),
])
def test_an_integer_out_of_its_range_names_the_parameter(data, make, message):
    """An int the C++ parameter cannot hold is refused by name, not with the binding's signatures."""
    with pytest.raises(conveyor.ConfigError, match=message) as e:
        make(data)
    assert not any(noise in str(e.value) for noise in NANOBIND), str(e.value)


def test_a_transforms_argument_error_names_its_place_in_the_compose(data):
    """What torchvision accepts but conveyor cannot run, or what only the crop's size rules out,
    named by its place in the pipeline, as the other Compose messages are; conveyor.transforms'
    own classes refuse their arguments as they are made, as torchvision's do."""
    v2 = pytest.importorskip("torchvision.transforms.v2")
    cases = [
        ([v2.RandomResizedCrop(32), v2.TrivialAugmentWide(interpolation=v2.InterpolationMode.BICUBIC)],
         r"^transform 1 \(TrivialAugmentWide\): interpolation bicubic runs on PIL images only \(Pillow's\): on a "
         r"tensor, nearest or bilinear"),
        ([v2.CenterCrop(32), v2.RandomInvert(), v2.GaussianBlur(65)],
         r"^transform 2 \(GaussianBlur\): kernel_size values must be odd, positive and at most 63, got 65"),
        ([v2.RandomResizedCrop(32), v2.Grayscale(1)], r"^transform 1 \(Grayscale\): num_output_channels"),
        ([v2.RandomResizedCrop(8), v2.GaussianBlur(23)],
         r"^transform 1 \(GaussianBlur\): kernel_size \(23, 23\) reflect-pads by \(11, 11\), which must be less "
         r"than the image's width and height; the image is 8 x 8"),
        ([v2.RandomResizedCrop(8), v2.RandomApply([v2.RandomInvert(), v2.GaussianBlur(17)])],
         r"^transform 1 \(RandomApply\): transforms\[1\]: GaussianBlur: kernel_size \(17, 17\)"),
    ]
    for steps, message in cases:
        with pytest.raises(conveyor.ConfigError, match=message):
            conveyor.Loader(data, transform=v2.Compose(steps))
    with pytest.raises(conveyor.ConfigError, match=r"kernel_size values must be odd, positive and at most 63"):
        conveyor.transforms.GaussianBlur(65)
    with pytest.raises(conveyor.ConfigError, match=r"interpolation must be one of 'nearest', 'bilinear', 'bicubic', "
                                                   r"got 'lanczos'"):
        conveyor.transforms.RandomRotation(10, interpolation="lanczos")


@pytest.mark.parametrize("distributed,message", [
    ("ENV", r"distributed must be False, 'env' or \(rank, world_size\), got 'ENV'"),
    (True, r"distributed must be False, 'env' or \(rank, world_size\), got True"),
    ((1,), r"distributed must be False, 'env' or \(rank, world_size\), got \(1,\)"),
    ((2, 2), r"distributed's rank 2 must be below its world_size 2"),
])
def test_an_unknown_distributed_value_names_the_parameter(data, distributed, message):
    with pytest.raises(conveyor.ConfigError, match=message):
        conveyor.Loader(data, distributed=distributed)


def test_distributed_env_without_local_rank_says_which_gpu_it_took(data, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.delenv("LOCAL_RANK", raising=False)

    def make(device):
        try:
            return conveyor.Loader(data, batch_size=2, distributed="env", device=device)
        except conveyor.Error as e:  # no GPU here: the warning came first
            return e

    with pytest.warns(UserWarning, match=r"RANK=1 and WORLD_SIZE=2 but no LOCAL_RANK, so device='cuda' is cuda:0"):
        make("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make("cpu")
        make("cuda:1")
        monkeypatch.setenv("LOCAL_RANK", "1")
        make("cuda")


def test_a_loop_that_fails_to_start_prints_nothing_more(samples):
    # A loader used after fork() refuses to start a loop; the half-made loop must not then print
    # "Exception ignored in ... __del__" when it is collected.
    code = f"""
        import gc, os, conveyor
        loader = conveyor.Loader(conveyor.ImageFolder({str(samples)!r}), batch_size=2, workers=1, output="dlpack")
        if os.fork() == 0:
            try:
                iter(loader)
            except conveyor.Error as e:
                print("refused:", "fork" in str(e), flush=True)
            gc.collect()
            os._exit(0)
        os.wait()
    """
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert "refused: True" in p.stdout, p.stdout + p.stderr
    assert "Exception ignored" not in p.stderr, p.stderr
