"""The embedding model loads without the network, and its offline switch stays inside that one load:
huggingface_hub in the same process still reaches a Hub afterwards (the advisor's model lookups).

Runs in a fresh Python process so that the embedder loads before anything else imports
huggingface_hub, the order in which a process-wide HF_HUB_OFFLINE would have cut the Hub off."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.conftest import ROOT

SCRIPT = textwrap.dedent("""
    import json, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen = []

    class Hub(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(self.path)
            body = json.dumps({"id": "acme/tiny-model", "sha": "rev-1"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    import os
    os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{server.server_port}"

    from ontology.embeddings import _model
    vector = _model().encode(["paged attention"], normalize_embeddings=True)
    during_load = list(seen)

    from huggingface_hub import HfApi, constants
    info = HfApi(endpoint=os.environ["HF_ENDPOINT"]).model_info("acme/tiny-model", timeout=5)
    print(json.dumps({"dim": len(vector[0]), "during_load": during_load, "offline": constants.HF_HUB_OFFLINE,
                      "env": os.environ.get("HF_HUB_OFFLINE"), "sha": info.sha, "after": seen[len(during_load):]}))
""")


def test_after_the_embedder_loads_huggingface_hub_in_the_same_process_still_reaches_a_loopback_hub():
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["dim"] == 384
    assert out["during_load"] == []  # the model came from site-packages: nothing asked the Hub
    assert out["offline"] is False and out["env"] is None
    assert out["sha"] == "rev-1" and "/api/models/acme/tiny-model" in out["after"]
