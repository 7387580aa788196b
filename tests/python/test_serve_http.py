"""examples/serve (conveyor-serve) on loopback: real HTTP requests, good, bad and oversized, from
several clients at once; each answer's checksum against conveyor.Preprocessor's tensor for the same
images; /metrics scraped (and checked by promtool where installed); stopped with SIGTERM."""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import urllib.error
import urllib.request

import pytest

import conveyor

ROOT = pathlib.Path(__file__).resolve().parents[2]
np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def server():
    path = pathlib.Path(os.environ.get("CONVEYOR_SERVE") or ROOT / "build" / "examples" / "serve" / "conveyor-serve")
    if not path.is_file():
        pytest.skip(f"conveyor-serve not built at {path} (needs cpp-httplib: Debian libcpp-httplib-dev)")
    proc = subprocess.Popen([str(path), "--port", "0", "--workers", "2", "--lanes", "2", "--max-images", "4",
                             "--size", "64", "--timeout-ms", "20000"], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening on 127.0.0.1:"), line
    yield proc, "http://" + line.split()[-1]
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def post(url, images):
    """POST `images` as multipart/form-data parts of one field; (status, JSON answer)."""
    boundary = "conveyor-test-boundary-7d1f"
    body = b""
    for i, data in enumerate(images):
        body += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"{i}.jpg\"\r\n"
                 "Content-Type: image/jpeg\r\n\r\n").encode() + data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    req = urllib.request.Request(url + "/preprocess", data=body,
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, json.loads(text) if text else {}  # httplib answers a malformed body with no text


def photos(samples):
    return [p.read_bytes() for p in sorted(pathlib.Path(samples).rglob("*.jpg"))]


def test_requests_are_answered_refused_and_counted(server, samples):
    proc, url = server
    images = photos(samples)
    reference = conveyor.Preprocessor(conveyor.ImageAugment.eval(73, 64), max_images=4, lanes=1, workers=2,
                                      output="numpy")

    def expected(batch):
        return fnv1a64(np.ascontiguousarray(reference(batch)).tobytes())

    status, answer = post(url, images[:3])
    assert status == 200, answer
    assert answer["images"] == 3 and answer["shape"] == [3, 3, 64, 64] and answer["dtype"] == "f32"
    assert answer["checksum"] == expected(images[:3])

    raw = urllib.request.Request(url + "/preprocess", data=images[4], headers={"Content-Type": "image/jpeg"})
    with urllib.request.urlopen(raw, timeout=60) as r:  # one image as the whole body
        assert json.loads(r.read())["checksum"] == expected(images[4:5])

    status, answer = post(url, [images[0], b"\xff\xd8 not the rest of a JPEG", images[1]])
    assert status == 422 and answer["position"] == 1 and answer["reason"], answer
    status, answer = post(url, images[:5])
    assert status == 413 and "5 images" in answer["error"]
    status, answer = post(url, [])  # a multipart body with no part
    assert status == 400

    failures = []

    def client(c):
        for r in range(4):
            batch = [images[(c + r + k) % len(images)] for k in range(1 + (c + r) % 4)]
            status, answer = post(url, batch)
            if status != 200 or answer["checksum"] != expected(batch):
                failures.append((c, r, status, answer))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []

    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        metrics = r.read().decode()
    assert 'conveyor_requests_total{service="conveyor-serve",outcome="answered"} 26' in metrics
    assert 'conveyor_requests_total{service="conveyor-serve",outcome="bad_image"} 1' in metrics
    assert 'conveyor_request_latency_seconds_count{service="conveyor-serve"} 26' in metrics
    if shutil.which("promtool"):
        check = subprocess.run(["promtool", "check", "metrics"], input=metrics, capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout + check.stderr, check.stdout + check.stderr

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert "stopped after 26 requests" in proc.stdout.read()
