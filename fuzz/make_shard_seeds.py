#!/usr/bin/env python3
"""Writes fuzz_shards' seed corpus into fuzz/seeds/shards/ with the tools users make shards with:
GNU tar (ustar, PAX and GNU long-name members), webdataset's TarWriter, DALI's wds2idx (for an
index, when DALI is installed), and the tfrecord package (records, its index, and one record's
Example alone). Each file starts with fuzz_shards.cpp's settings byte (and index length). The
members are a few bytes each: the walkers, not the images, are what this target fuzzes.

    python3 fuzz/make_shard_seeds.py      # needs: tar, pip install webdataset tfrecord [nvidia-dali]
"""
import io
import pathlib
import struct
import subprocess
import tempfile

import tfrecord
import webdataset

OUT = pathlib.Path(__file__).resolve().parent / "seeds" / "shards"
TAR, TFRECORD, EXAMPLE, WITH_INDEX = 0, 1, 2, 4


def seed(name, kind, shard, index=b""):
    head = bytes([kind | (WITH_INDEX if index else 0)])
    if index:
        head += struct.pack("<H", len(index)) + index
    (OUT / name).write_bytes(head + shard)


def gnu_tar(work, fmt):
    """Three samples, one under a path longer than ustar's 100 bytes, written by GNU tar."""
    root = work / fmt
    long_dir = root / ("d" * 60) / ("e" * 50)
    long_dir.mkdir(parents=True)
    for key, where in (("a", root), ("b", root), ("c", long_dir)):
        (where / f"{key}.jpg").write_bytes(b"\xff\xd8 image " + key.encode())
        (where / f"{key}.cls").write_text(str(ord(key) - ord("a")))
    out = work / f"{fmt}.tar"
    members = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    subprocess.run(["tar", f"--format={fmt}", "-b", "1", "-cf", str(out), "-C", str(root), *members], check=True)
    return out.read_bytes()


def wds_tar():
    buf = io.BytesIO()
    with webdataset.TarWriter(buf) as sink:
        for k in range(3):
            sink.write({"__key__": f"shard/{k:04d}", "png": b"\x89PNG seed %d" % k, "cls": k, "json": b"{}"})
    return buf.getvalue()


def wds2idx(work, shard):
    try:
        from wds2idx import IndexCreator
    except ImportError:
        return b""
    path, index = work / "idx.tar", work / "idx.idx"
    path.write_bytes(shard)
    with IndexCreator(str(path), str(index), verbose=False) as creator:
        creator.create_index()
    return index.read_bytes()


def tfrecords(work):
    from tfrecord.tools.tfrecord2idx import create_index

    path = work / "train-00000-of-00001"
    writer = tfrecord.TFRecordWriter(str(path))
    for k in range(3):
        writer.write({"image/encoded": (b"\xff\xd8 record %d" % k, "byte"), "image/class/label": (k + 1, "int"),
                      "image/filename": (b"%d.jpg" % k, "byte")})
    writer.close()
    create_index(str(path), str(path) + ".idx")
    data = path.read_bytes()
    length = struct.unpack("<Q", data[:8])[0]
    return data, pathlib.Path(str(path) + ".idx").read_bytes(), data[12:12 + length]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for fmt in ("ustar", "pax", "gnu"):
            seed(f"tar-{fmt}", TAR, gnu_tar(work, fmt))
        shard = wds_tar()
        seed("tar-webdataset", TAR, shard)
        index = wds2idx(work, shard)
        if index:
            seed("tar-webdataset-wds2idx", TAR, shard, index)
        records, record_index, example = tfrecords(work)
        seed("tfrecord", TFRECORD, records)
        seed("tfrecord-indexed", TFRECORD, records, record_index)
        seed("example", EXAMPLE, example)
    for p in sorted(OUT.iterdir()):
        print(f"{p.name}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
