"""The transforms' defaults and presets: a Loader without a transform gets the evaluation preset
(no randomness), and the presets normalise for every dtype as C++'s do, so u8 asks for
normalize=None."""
import pytest

import conveyor

torch = pytest.importorskip("torch")


def images(loader):
    return [torch.from_dlpack(b.images).clone() for b in loader.batches()]


def test_a_loader_without_a_transform_gets_the_eval_preset(samples):
    default = conveyor.Loader(str(samples), batch_size=5, shuffle=True, seed=1, workers=2)
    assert default.transform == conveyor.ImageAugment.eval()
    first, second = images(default), images(default)  # epochs 0 and 1
    preset = images(conveyor.Loader(str(samples), batch_size=5, shuffle=True, seed=1, workers=2,
                                    transform=conveyor.ImageAugment.eval()))
    assert [tuple(x.shape) for x in first] == [(5, 3, 224, 224)] * 2 + [(3, 3, 224, 224)]
    assert all(torch.equal(a, b) for a, b in zip(first, preset))
    # The same photos in another order give the same crops: nothing is random.
    def by_index(loader):
        return {i: im.clone() for b in loader.batches() for i, im in zip(b.indices, torch.from_dlpack(b.images))}

    zero, one = by_index(default), by_index(default)
    assert all(torch.equal(zero[i], one[i]) for i in zero)
    assert float(first[0].mean()) < 1.0 and float(first[0].min()) < 0  # normalised: not pixels / 255
    assert len(second) == 3


def test_the_presets_normalise_every_dtype_as_cpp_does(samples):
    for preset in (conveyor.ImageAugment.train, conveyor.ImageAugment.eval):
        assert preset().normalize == "imagenet"
        assert preset(dtype="u8").normalize == "imagenet"  # C++'s train() and eval() keep it too
        with pytest.raises(conveyor.ConfigError, match="u8 output cannot be normalized: pass normalize=None"):
            conveyor.Loader(str(samples), transform=preset(dtype="u8"))
        loader = conveyor.Loader(str(samples), batch_size=2, workers=1, transform=preset(dtype="u8", normalize=None))
        batch = next(loader.batches())
        assert batch.images.dtype == "u8"


def test_pixel_transforms_run_in_a_loader_and_name_what_they_refuse(samples):
    from conveyor import transforms as T

    plain = conveyor.ImageAugment.train(32, dtype="u8", normalize=None)
    inverted = conveyor.ImageAugment.train(32, dtype="u8", normalize=None, transforms=[T.RandomInvert(p=1.0)])
    a = images(conveyor.Loader(str(samples), batch_size=4, seed=3, workers=2, transform=plain))
    b = images(conveyor.Loader(str(samples), batch_size=4, seed=3, workers=2, transform=inverted))
    assert all(torch.equal(255 - x, y) for x, y in zip(a, b))
    calls = inverted.drawn_calls(3, 0, 0, 640, 480)
    assert calls[-1] == T.DrawnCall("invert", {}) and calls[-1].function == "invert"
    with pytest.raises(conveyor.ConfigError, match=r"^RandomSolarize: threshold must be at most 255"):
        T.RandomSolarize(threshold=300)  # refused as it is made, as torchvision's own
    with pytest.raises(conveyor.ConfigError, match=r"transforms\[1\]: GaussianBlur: kernel_size \(33, 33\) reflect-pads"):
        conveyor.ImageAugment(size=16, transforms=[T.RandomInvert(), T.GaussianBlur(33)])._native()
    with pytest.raises(conveyor.ConfigError, match="RandomInvert comes after RandomErasing, which applies to the normalised output: a transform of the uint8 image must come before it"):
        conveyor.ImageAugment(transforms=[T.RandomErasing(), T.RandomInvert()])._native()
    with pytest.raises(conveyor.ConfigError, match="RandomErasing: value given as a string must be 'random', got 'noise'"):
        conveyor.ImageAugment(transforms=[T.RandomErasing(value="noise")])._native()
    with pytest.raises(TypeError, match=r"transforms\[0\] must be one of conveyor.transforms' classes"):
        conveyor.ImageAugment(transforms=[lambda image: image])._native()  # type: ignore[list-item]
    with pytest.raises(TypeError, match="ColorJitter: hue must be None, a number or a"):
        conveyor.ImageAugment(transforms=[T.ColorJitter(hue="0.1")])._native()  # type: ignore[arg-type]


def test_every_registered_transform_has_its_class_and_stub_made_from_its_declaration():
    """The Python classes and the stubs are made from the C++ declarations: same names, fields,
    order, required fields and summaries, and nothing else (conveyor/transforms/fields.hpp)."""
    import ast
    import dataclasses
    import pathlib

    from conveyor import _conveyor
    from conveyor import transforms as T

    schema = _conveyor.pixel_transform_schema()
    assert [c.__name__ for c in T._PIXEL_TRANSFORMS] == [entry[0] for entry in schema]
    declared = {name: [(field, required) for field, _, required, _ in fields] for name, _, fields, _ in schema}
    for name, summary, fields, _ in schema:
        cls = getattr(T, name)
        assert cls.__doc__ == summary and cls.__module__ == "conveyor.transforms"
        made = [(f.name, f.default is dataclasses.MISSING) for f in dataclasses.fields(cls)]
        assert made == declared[name]
        for field, _, required, default in fields:
            if not required:
                assert getattr(cls.__dataclass_fields__[field], "default") == default
    stub = ast.parse((pathlib.Path(conveyor.__file__).parent / "_pixel_transforms.pyi").read_text())
    stubbed = {node.name: [(a.target.id, a.value is None) for a in node.body if isinstance(a, ast.AnnAssign)]
               for node in stub.body if isinstance(node, ast.ClassDef) and not node.name.startswith("_")}
    assert stubbed == declared


def test_a_transform_refuses_arguments_it_does_not_declare_and_needs_those_it_requires():
    from conveyor import _conveyor

    with pytest.raises(TypeError, match=r"RandomPosterize: no argument 'bitz'"):
        _conveyor.make_pixel_transform("RandomPosterize", {"bits": 3, "bitz": 3})
    with pytest.raises(TypeError, match=r"RandomPosterize: missing the required argument 'bits'"):
        _conveyor.make_pixel_transform("RandomPosterize", {})
    with pytest.raises(conveyor.ConfigError, match=r"no pixel transform named 'Posterize'"):
        _conveyor.make_pixel_transform("Posterize", {"bits": 3})
    assert _conveyor.make_pixel_transform("RandomPosterize", {"bits": 3}).name == "RandomPosterize"


def test_the_transforms_page_is_the_one_written_from_the_declarations():
    """docs/transforms.md lists what the registry holds (python/transform_declarations.py writes it)."""
    import importlib.util
    import pathlib

    from conveyor import _conveyor

    root = pathlib.Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("transform_declarations", root / "python" / "transform_declarations.py")
    declarations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(declarations)
    page = (root / "docs" / "transforms.md").read_text()
    assert page == declarations.docs(_conveyor.pixel_transform_schema()), \
        "docs/transforms.md is stale: python python/transform_declarations.py docs docs/transforms.md"
