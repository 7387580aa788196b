"""A model server whose preprocessing is a Hugging Face image processor run by conveyor.Preprocessor:
each request's JPEG or PNG bytes become the processor's pixel values (bit for bit) on the model's
device, without PIL or the processor in the request path.

    python3 examples/python/serve_hf.py [--model google/vit-base-patch16-224] [--device cuda] [--port 8000]
    curl -s localhost:8000/classify -d "{\\"images\\": [\\"$(base64 -w0 cat.jpg)\\"]}"

POST /classify takes {"images": [base64, ...]} (up to --max-images) and answers {"top5": [[[class,
score], ...] per image]}. Without --model it builds a small ViT classifier and its processor from
their default configurations (random weights: no download), which is what the tests serve.
"""
import argparse
import base64
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional, Tuple

import torch
import transformers

import conveyor


def load(model_name: Optional[str], device: str) -> Tuple[Any, Any]:
    """The processor and the model, from the hub (`model_name`) or from default configurations."""
    if model_name:
        processor = transformers.AutoImageProcessor.from_pretrained(model_name)
        model = transformers.AutoModelForImageClassification.from_pretrained(model_name)
    else:
        torch.manual_seed(0)
        processor = transformers.ViTImageProcessor()
        config = transformers.ViTConfig(hidden_size=96, num_hidden_layers=2, num_attention_heads=2,
                                        intermediate_size=192)
        config.num_labels = 10
        model = transformers.ViTForImageClassification(config)
    return processor, model.to(device).eval()


def make_server(model_name: Optional[str] = None, device: str = "cpu", port: int = 8000, max_images: int = 32,
                workers: int = -1) -> ThreadingHTTPServer:
    """A ThreadingHTTPServer serving /classify on `port` (0: any free port)."""
    processor, model = load(model_name, device)
    # The processor's resize, crop, rescale and normalisation, compiled once; on a GPU the batch
    # arrives on the device, ordered on the caller's stream.
    pre = conveyor.Preprocessor(transform=processor, max_images=max_images, device=device, workers=workers)
    labels = model.config.id2label

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path != "/classify":
                self.send_error(404)
                return
            try:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                images = [base64.b64decode(b) for b in request["images"]]
                with torch.inference_mode():
                    logits = model(pixel_values=pre(images)).logits
            except (conveyor.SampleError, conveyor.ConfigError, KeyError, ValueError) as e:
                self.send_error(400, str(e))
                return
            scores, classes = logits.softmax(-1).topk(min(5, logits.shape[-1]))
            body = json.dumps({"top5": [[[labels[int(c)], float(s)] for c, s in zip(cs, ss)]
                                        for cs, ss in zip(classes.tolist(), scores.tolist())]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=None, help="a hub model id (default: a small random ViT, offline)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-images", type=int, default=32)
    a = p.parse_args()
    server = make_server(a.model, a.device, a.port, a.max_images)
    print(f"serving /classify on port {server.server_address[1]}, {a.device}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
