"""examples/python/serve_hf.py on loopback: a model server whose preprocessing is a Hugging Face
processor run by conveyor.Preprocessor answers what the model answers on the processor's own pixel
values, image for image; a bad image gets 400 and the server goes on."""
import base64
import importlib.util
import json
import pathlib
import threading
import urllib.error
import urllib.request

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
from PIL import Image  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("serve_hf", ROOT / "examples" / "python" / "serve_hf.py")
serve_hf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(serve_hf)


def _post(port, payload):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/classify", data=json.dumps(payload).encode())
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def test_the_server_answers_what_the_model_answers_on_the_processors_pixel_values():
    files = sorted((ROOT / "examples" / "data" / "samples").rglob("*.jpg"))[:3]
    assert files
    server = serve_hf.make_server(port=0, max_images=4, workers=2)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        got = _post(port, {"images": [base64.b64encode(f.read_bytes()).decode() for f in files]})["top5"]
        processor, model = serve_hf.load(None, "cpu")
        with torch.inference_mode():
            pixels = processor([Image.open(f).convert("RGB") for f in files], return_tensors="pt")["pixel_values"]
            scores, classes = model(pixel_values=pixels).logits.softmax(-1).topk(5)
        want = [[[model.config.id2label[int(c)], float(s)] for c, s in zip(cs, ss)]
                for cs, ss in zip(classes.tolist(), scores.tolist())]
        assert got == want
        with pytest.raises(urllib.error.HTTPError) as bad:
            _post(port, {"images": [base64.b64encode(b"not an image").decode()]})
        assert bad.value.code == 400
        assert len(_post(port, {"images": [base64.b64encode(files[0].read_bytes()).decode()]})["top5"]) == 1
    finally:
        server.shutdown()
        server.server_close()
