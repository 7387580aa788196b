"""Paths as Python's os module carries them: file names in any encoding reach the file system and
come back (names, errors, skipped samples) as os.fsdecode gives them, so they open again; a file
that is not a dataset says so."""
import os
import pathlib

import pytest

import conveyor

NOT_UTF8 = b"\xe9t\xe9"  # Latin-1 "ete": a name some file systems hold that UTF-8 cannot decode


@pytest.fixture
def tree(tmp_path, samples):
    """A class folder and files named in Latin-1: two photos and one file that is not an image."""
    root = os.fsencode(tmp_path / "data")
    folder = os.path.join(root, b"cl" + NOT_UTF8)
    os.makedirs(folder)
    photo = (samples / "plant" / "pillow_flower.jpg").read_bytes()
    files = [os.path.join(folder, name) for name in (b"a" + NOT_UTF8 + b".jpg", b"b.jpg", b"c" + NOT_UTF8 + b".jpg")]
    for path, data in zip(files, (photo, photo, b"not a jpeg")):
        with open(path, "wb") as f:
            f.write(data)
    return root, files


def test_names_that_are_not_utf8_round_trip(tree):
    root, files = tree
    for given in (root, os.fsdecode(root), pathlib.Path(os.fsdecode(root))):
        data = conveyor.ImageFolder(given)
        assert data.classes == [os.fsdecode(b"cl" + NOT_UTF8)]
        assert [os.fsencode(data.name(i)) for i in range(len(data))] == files
        assert os.fsencode(data.root) == root
    with open(data.name(0), "rb") as f:  # the name opens the file it names
        assert f.read() == data.read(0)
    listing = os.path.join(root, b"list " + NOT_UTF8 + b".txt")
    with open(listing, "wb") as f:
        f.write(b"".join(p + b" 1\n" for p in files))
    listed = conveyor.FileList(listing)
    assert [os.fsencode(listed.name(i)) for i in range(len(listed))] == files
    with pytest.raises(conveyor.IoError) as missing:
        conveyor.ImageFolder(os.path.join(root, b"gone" + NOT_UTF8))
    assert os.fsencode(missing.value.path) == os.path.join(root, b"gone" + NOT_UTF8)
    assert "gone\\xe9t\\xe9" in str(missing.value)  # the message escapes what it cannot decode


def test_a_sample_error_and_the_skipped_list_keep_such_paths(tree):
    root, files = tree
    data = conveyor.ImageFolder(root)
    transform = conveyor.ImageAugment.eval(20, 16)
    with pytest.raises(conveyor.SampleError) as e:
        for _ in conveyor.Loader(data, batch_size=3, workers=2, transform=transform):
            pass
    assert e.value.index == 2 and os.fsencode(e.value.path) == files[2]
    assert "c\\xe9t\\xe9.jpg" in str(e.value) and "Not a JPEG" in e.value.reason
    skip = conveyor.Loader(data, batch_size=3, workers=2, transform=transform, on_error="skip")
    assert sum(len(labels) for _, labels in skip) == 3
    assert [(s.index, os.fsencode(s.path)) for s in skip.skipped] == [(2, files[2])]


def test_an_image_given_as_the_dataset_is_not_taken_for_a_list(samples):
    photo = samples / "plant" / "pillow_flower.jpg"
    for make in (lambda: conveyor.Loader(str(photo)), lambda: conveyor.FileList(photo),
                 lambda: conveyor.open_dataset(photo)):
        with pytest.raises(conveyor.ConfigError, match="is not a list of '<path> <integer label>' lines but binary"):
            make()
