"""The formats against the tools that write and read them elsewhere: PNG pixels against Pillow's on
the PNG suites, PGM/PPM files written by netpbm, ImageFolder's listing against torchvision's, tar
shards written by webdataset and TFRecords written by the tfrecord package, and conveyor-pack's
shards read back by both."""
import pathlib
import shutil
import subprocess

import numpy
import pytest

import conveyor

Image = pytest.importorskip("PIL.Image", reason="Pillow is the reference decoder")


def pillow_rgb(path):
    """What torchvision's ImageFolder yields (Image.open(f).convert("RGB")), except that 16-bit
    grey keeps its high byte, where Pillow clamps it to 255 (documented in png.hpp)."""
    with Image.open(path) as im:
        if im.mode in ("I;16", "I;16B", "I"):
            grey = (numpy.asarray(im, dtype=numpy.uint32) >> 8).astype(numpy.uint8)
            return numpy.repeat(grey[:, :, None], 3, axis=2)
        return numpy.asarray(im.convert("RGB"))


def pngs(root, *parts):
    return sorted(p for p in (root / "png").joinpath(*parts).rglob("*.png"))


def bit_depth(path):
    """The PNG's bit depth, from its IHDR (the first chunk: its depth is byte 24 of the file)."""
    return path.read_bytes()[24]


def test_png_pixels_equal_pillow_on_every_suite_file(shared_data):
    files = pngs(shared_data, "pngsuite") + [p for p in pngs(shared_data, "testpngs")
                                             if p.parent.name not in ("crashers", "badpal")]
    assert len(files) > 150
    sixteen = [p for p in files if bit_depth(p) == 16]
    assert len(sixteen) >= 10
    for path in files:
        mine = conveyor.decode_image(path.read_bytes(), sixteen_bit="high_byte")
        theirs = pillow_rgb(path)
        assert mine.shape == theirs.shape, path.name
        diff = numpy.flatnonzero(mine != theirs)
        assert diff.size == 0, f"{path.name}: {diff.size} values differ from Pillow's, first at {diff[0]}"
        if bit_depth(path) != 16:
            assert numpy.array_equal(conveyor.decode_image(path.read_bytes()), mine), path.name


def test_a_16_bit_png_is_refused_by_name_unless_its_high_bytes_are_asked_for(shared_data, tmp_path):
    """torchvision.io.decode_image gives uint16 and ToDtype(float32, scale=True) divides by 65535:
    8-bit samples cannot keep that, so conveyor refuses the file rather than truncate it, in
    decode_image and in a Loader (the sample's error names the file); sixteen_bit="high_byte"
    decodes it as Pillow's convert("RGB") does, for an ImageFolder user."""
    sixteen = [p for p in pngs(shared_data, "pngsuite") if bit_depth(p) == 16]
    eight = [p for p in pngs(shared_data, "pngsuite") if bit_depth(p) == 8]
    assert sixteen and eight
    with pytest.raises(conveyor.DecodeError, match="16-bit PNG"):
        conveyor.decode_image(sixteen[0].read_bytes())
    folder = tmp_path / "images" / "a"
    folder.mkdir(parents=True)
    (folder / "0.png").write_bytes(eight[0].read_bytes())
    (folder / "1.png").write_bytes(sixteen[0].read_bytes())
    plain = conveyor.ImageAugment(crop="center", size=8, dtype="u8")
    loader = conveyor.Loader(str(tmp_path / "images"), batch_size=2, workers=0, transform=plain, output="numpy")
    with pytest.raises(conveyor.SampleError, match=r"1\.png.*16-bit PNG"):
        list(loader)
    high = conveyor.ImageAugment(crop="center", size=8, dtype="u8", sixteen_bit="high_byte")
    loader = conveyor.Loader(str(tmp_path / "images"), batch_size=2, workers=0, transform=high, output="numpy")
    (images, _), = list(loader)
    assert images.shape == (2, 3, 8, 8)


def test_damaged_pngs_fail_cleanly_or_decode_as_pillow_does(shared_data):
    files = pngs(shared_data, "testpngs", "crashers") + pngs(shared_data, "testpngs", "badpal")
    assert len(files) >= 30
    refused = 0
    for path in files:
        try:
            mine = conveyor.decode_image(path.read_bytes())
        except conveyor.DecodeError as e:
            assert str(e), path.name
            refused += 1
            continue
        try:
            theirs = pillow_rgb(path)
        except Exception:  # Pillow refuses what libpng recovered from (an ancillary chunk's CRC)
            continue
        differ = (mine != theirs).any(axis=2)
        if differ.any():
            # Only where a palette index points past the palette (badpal): the PNG standard leaves
            # those undefined; libpng, and Pillow from 10 on, give black, older Pillow a grey ramp.
            with Image.open(path) as im:
                assert im.mode == "P", path.name
                indices = numpy.asarray(im)
            assert (indices[differ] >= palette_entries(path.read_bytes())).all(), path.name
            assert (mine[differ] == 0).all(), path.name
    assert 0 < refused < len(files)


def palette_entries(png):
    """Entries in the PLTE chunk, read from the chunk list itself."""
    at = 8
    while at + 8 <= len(png):
        length, kind = int.from_bytes(png[at:at + 4], "big"), png[at + 4:at + 8]
        if kind == b"PLTE":
            return length // 3
        at += 12 + length
    return 0


@pytest.fixture(scope="module")
def netpbm(tmp_path_factory, shared_data):
    """Photos as netpbm writes them: jpegtopnm's PPM, ppmtopgm's PGM, pnmdepth's 16-bit PPM and
    pnmtopng's PNG."""
    for tool in ("jpegtopnm", "ppmtopgm", "pnmdepth", "pnmtopng"):
        if shutil.which(tool) is None:
            pytest.skip(f"netpbm's {tool} not installed (Debian package netpbm)")
    out = tmp_path_factory.mktemp("netpbm")
    photos = sorted((shared_data / "photos").glob("*.jpg"))[:6]
    made = []
    for photo in photos:
        ppm = out / (photo.stem + ".ppm")

        def run(args, dest):
            dest.write_bytes(subprocess.run(args, check=True, capture_output=True).stdout)

        run(["jpegtopnm", str(photo)], ppm)
        run(["ppmtopgm", str(ppm)], out / (photo.stem + ".pgm"))
        run(["pnmdepth", "65535", str(ppm)], out / (photo.stem + ".16.ppm"))
        run(["pnmtopng", str(ppm)], out / (photo.stem + ".png"))
        made.append((photo, ppm))
    return made


def test_netpbm_files_decode_to_the_jpeg_they_came_from(netpbm):
    for photo, ppm in netpbm:
        jpeg = conveyor.decode_image(photo.read_bytes())
        as_ppm = conveyor.decode_image(ppm.read_bytes())
        # jpegtopnm decodes with libjpeg's defaults, as conveyor does at full size: the same pixels.
        assert numpy.array_equal(as_ppm, jpeg), photo.name
        assert numpy.array_equal(as_ppm, pillow_rgb(ppm)), ppm.name
        assert numpy.array_equal(conveyor.decode_image(ppm.with_suffix(".png").read_bytes()), as_ppm), photo.name
        sixteen = ppm.with_name(ppm.stem + ".16.ppm")
        assert numpy.array_equal(conveyor.decode_image(sixteen.read_bytes()), as_ppm), sixteen.name
        pgm = ppm.with_suffix(".pgm")
        assert numpy.array_equal(conveyor.decode_image(pgm.read_bytes()), pillow_rgb(pgm)), pgm.name


def test_image_folder_lists_what_torchvision_lists(tmp_path, samples):
    datasets = pytest.importorskip("torchvision.datasets", reason="torchvision is the reference")
    photo = next(samples.rglob("*.jpg")).read_bytes()
    names = {"a": ["x.jpg", "y.JPEG", "z.png", "w.ppm", "v.pgm", "u.bmp", "t.txt", "s.webp", "r.tif", ".hidden.jpg"],
             "b": ["1.jpeg", "2.PNG", "3.gif", "notes.md"], "c": ["deep/inner.jpg", "deep/inner.json"]}
    for cls, files in names.items():
        for name in files:
            path = tmp_path / cls / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(photo)
    theirs = datasets.ImageFolder(str(tmp_path))
    mine = conveyor.ImageFolder(str(tmp_path))
    assert mine.classes == theirs.classes
    assert [(mine.name(i), mine.label(i)) for i in range(len(mine))] == [(str(pathlib.Path(p)), c) for p, c in theirs.samples]


def test_an_image_of_a_format_without_a_codec_is_named(tmp_path, samples):
    (tmp_path / "a").mkdir()
    Image.open(next(samples.rglob("*.jpg"))).save(tmp_path / "a" / "photo.bmp")
    loader = conveyor.Loader(conveyor.ImageFolder(str(tmp_path)), batch_size=1, workers=1, output="numpy",
                             transform=conveyor.ImageAugment.eval(32, 32))
    with pytest.raises(conveyor.SampleError, match=r"photo\.bmp.*BMP images are not decoded"):
        next(iter(loader))


def photo_samples(samples, n=13):
    files = sorted(samples.rglob("*.jpg"))[:n]
    return [(f.read_bytes(), i % 3) for i, f in enumerate(files)]


def test_tar_shards_written_by_webdataset(tmp_path, samples):
    wds = pytest.importorskip("webdataset", reason="pip install webdataset")
    items = photo_samples(samples)
    for shard in range(3):
        with wds.TarWriter(str(tmp_path / f"train-{shard:02d}.tar")) as sink:
            for k, (data, label) in enumerate(items):
                if k % 3 == shard:
                    sink.write({"__key__": f"s{shard}/{k:04d}", "jpg": data, "cls": label})
    pattern = str(tmp_path / "train-{00..02}.tar")
    reference = [(s["jpg"], int(s["cls"])) for s in wds.WebDataset(pattern, shardshuffle=False)]
    mine = conveyor.TarShards(pattern)
    assert mine.shard_sizes == [len(range(shard, len(items), 3)) for shard in range(3)]
    assert [(mine.read(i), mine.label(i)) for i in range(len(mine))] == reference
    loader = conveyor.Loader(mine, batch_size=4, shuffle=True, seed=3, workers=2, shard_window=2, output="numpy",
                             transform=conveyor.ImageAugment.eval(32, 32))
    labels = numpy.concatenate([lab for _, lab in loader])
    assert sorted(labels.tolist()) == sorted(lab for _, lab in reference)
    # The pattern itself, as conveyor-bench's --data takes it: the same batches.
    by_name = conveyor.Loader(pattern, batch_size=4, shuffle=True, seed=3, workers=2, shard_window=2, output="numpy",
                              transform=conveyor.ImageAugment.eval(32, 32))
    assert isinstance(by_name.dataset, conveyor.TarShards)
    assert numpy.array_equal(numpy.concatenate([lab for _, lab in by_name]), labels)


def test_tfrecords_written_by_the_tfrecord_package(tmp_path, samples):
    tfrecord = pytest.importorskip("tfrecord", reason="pip install tfrecord")
    from tfrecord.tools.tfrecord2idx import create_index

    items = photo_samples(samples)
    path = tmp_path / "train-00000-of-00001"
    writer = tfrecord.TFRecordWriter(str(path))
    for data, label in items:
        writer.write({"image/encoded": (data, "byte"), "image/class/label": (label + 1, "int"),
                      "image/format": (b"jpeg", "byte")})
    writer.close()
    walked = conveyor.TFRecordDataset(str(path), label_offset=-1)
    create_index(str(path), str(path) + ".idx")
    indexed = conveyor.TFRecordDataset(str(path), label_offset=-1)
    for d in (walked, indexed):
        assert [(d.read(i), d.label(i)) for i in range(len(d))] == items
    # A flipped byte inside a record's image is caught by its CRC, named by file and offset.
    damaged = bytearray(path.read_bytes())
    damaged[len(damaged) // 2] ^= 0x40
    path.write_bytes(bytes(damaged))
    bad = conveyor.TFRecordDataset(str(path), label_offset=-1)
    with pytest.raises(conveyor.DecodeError, match=r"train-00000-of-00001: the record at byte \d+ has a bad data CRC"):
        for i in range(len(bad)):
            bad.read(i)


@pytest.fixture(scope="session")
def pack(bench):
    path = bench.parent / "conveyor-pack"
    if not path.is_file():
        pytest.skip(f"conveyor-pack not built at {path}")
    return path


def test_conveyor_pack_shards_read_back_by_webdataset_and_tfrecord(tmp_path, samples, pack):
    wds = pytest.importorskip("webdataset", reason="pip install webdataset")
    tfrecord = pytest.importorskip("tfrecord", reason="pip install tfrecord")
    from tfrecord.tools.tfrecord2idx import create_index

    folder = conveyor.ImageFolder(str(samples))
    expected = [(folder.read(i), folder.label(i)) for i in range(len(folder))]
    subprocess.run([str(pack), "--data", str(samples), "--out", str(tmp_path / "w"), "--shard-size", "5"], check=True,
                   capture_output=True)
    tars = sorted(tmp_path.glob("w-*.tar"))
    assert len(tars) == 3 and all(t.with_suffix(".idx").is_file() for t in tars)
    got = [(s["jpg"], int(s["cls"])) for s in wds.WebDataset([str(t) for t in tars], shardshuffle=False)]
    assert got == expected
    subprocess.run([str(pack), "--data", str(samples), "--out", str(tmp_path / "t"), "--format", "tfrecord",
                    "--shard-size", "5", "--label-offset", "1"], check=True, capture_output=True)
    records = sorted(p for p in tmp_path.glob("t-*") if p.suffix != ".idx")
    assert len(records) == 3
    got = []
    for r in records:
        # With an index the package starts at a random record, so the order is read without one.
        for example in tfrecord.reader.tfrecord_loader(str(r), None):
            got.append((bytes(example["image/encoded"]), int(example["image/class/label"][0]) - 1))
        create_index(str(r), str(tmp_path / "theirs.idx"))
        assert (tmp_path / "theirs.idx").read_text() == pathlib.Path(str(r) + ".idx").read_text(), r.name
    assert got == expected


def test_conveyor_pack_index_is_what_dali_wds2idx_writes(tmp_path, samples, pack):
    wds2idx = shutil.which("wds2idx")
    if wds2idx is None:
        pytest.skip("DALI's wds2idx not installed (pip install nvidia-dali-cuda120)")
    subprocess.run([str(pack), "--data", str(samples), "--out", str(tmp_path / "w"), "--shard-size", "5"], check=True,
                   capture_output=True)
    for tar in sorted(tmp_path.glob("w-*.tar")):
        dali = tmp_path / (tar.stem + ".dali.idx")
        subprocess.run([wds2idx, str(tar), str(dali)], check=True, capture_output=True)
        assert tar.with_suffix(".idx").read_text() == dali.read_text(), tar.name


def test_open_dataset_reads_what_the_name_says(tmp_path, samples):
    photos = sorted(samples.rglob("*.jpg"))[:3]
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{p} {i}\n" for i, p in enumerate(photos)))
    assert isinstance(conveyor.open_dataset(samples), conveyor.ImageFolder)
    assert isinstance(conveyor.open_dataset(str(listing)), conveyor.FileList)
    assert len(conveyor.open_dataset(listing)) == 3
    with pytest.raises(conveyor.IoError, match="train-0.tar"):
        conveyor.open_dataset(tmp_path / "train-0.tar")
    with pytest.raises(conveyor.IoError, match="x-00000-of-00001"):
        conveyor.open_dataset(tmp_path / "x-00000-of-00001")
    with pytest.raises(conveyor.Error, match="not a folder"):
        conveyor.open_dataset(tmp_path / "nothing")
    with pytest.raises(conveyor.ConfigError, match="format must be one of"):
        conveyor.open_dataset(samples, format="zip")
