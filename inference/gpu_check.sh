#!/usr/bin/env bash
# The GPU path in one go, for the first minutes a CUDA machine is lent: the engine's numerics tests with every
# engine on "cuda" (INFRAWIKI_DEVICE; transformers references stay on the CPU in float32), the benchmark with
# random weights of Qwen2.5-7B's shape against transformers on the same device, and, when `pip install vllm`
# works there, vLLM on the same random 7B workload. Results go to $OUT (or ./gpu-check): the pytest log, the
# benchmark's JSON, vLLM's, nvidia-smi's view of the device; the last line printed is one summary line:
#   gpu_check: tests=PASS|FAIL engine=N tok/s transformers=N tok/s vllm=N tok/s|skipped (why)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/nvidia-smi.csv"
"$PY" -c "import torch; assert torch.cuda.is_available(), 'torch sees no CUDA device'; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())" \
    || { echo "gpu_check: tests=FAIL (torch sees no CUDA device)"; exit 1; }
tests=PASS
INFRAWIKI_DEVICE=cuda timeout "${TEST_TIMEOUT_S:-300}" "$PY" -m pytest -q -p no:cacheprovider -m "not slow" \
    tests/inference/test_numerics_vs_transformers.py tests/inference/test_scheduler.py \
    tests/inference/test_sampling.py tests/inference/test_guided_decoding.py tests/inference/test_openai_client.py \
    > "$OUT/pytest-cuda.log" 2>&1 || tests=FAIL
tail -5 "$OUT/pytest-cuda.log"
timeout "${BENCH_TIMEOUT_S:-300}" "$PY" -m inference.bench --device cuda --random-7b --requests 16 --json \
    > "$OUT/bench-random-7b.json" 2> "$OUT/bench-random-7b.err"
vllm="skipped (not installable)"
if "$PY" -m pip install -q vllm > "$OUT/vllm-install.log" 2>&1 || "$PY" -c "import vllm" 2>/dev/null; then
    # the bench's seeded workload (same prompts and lengths) through vLLM's offline LLM, on random ("dummy")
    # weights of the same Qwen2.5-7B shape as the bench's --random-7b
    vllm=$(timeout "${VLLM_TIMEOUT_S:-600}" "$PY" - <<'PY' 2> "$OUT/vllm.err" || echo "failed (see $OUT/vllm.err)"
import tempfile, time
from transformers import Qwen2Config
from vllm import LLM, SamplingParams
from inference.bench import QWEN25_7B, workload
reqs = workload(0, 16, QWEN25_7B["vocab_size"])
folder = tempfile.mkdtemp()
Qwen2Config(architectures=["Qwen2ForCausalLM"], **QWEN25_7B).save_pretrained(folder)  # no download needed
llm = LLM(folder, load_format="dummy", dtype="bfloat16", max_model_len=1024, skip_tokenizer_init=True)
prompts = [{"prompt_token_ids": r.prompt} for r in reqs]
params = [SamplingParams(max_tokens=r.output_len, temperature=0, ignore_eos=True) for r in reqs]
llm.generate(prompts[:2], params[:2])
t = time.perf_counter()
llm.generate(prompts, params)
print(f"{sum(r.output_len for r in reqs) / (time.perf_counter() - t):.1f} tok/s")
PY
)
fi
summary=$("$PY" - "$OUT/bench-random-7b.json" <<'PY' 2>/dev/null || echo "engine=failed (see bench-random-7b.err)"
import json, sys
r = json.load(open(sys.argv[1]))
hf = r.get("hf_static_batch", {}).get("tok_s")
print(f"engine={r['engine']['tok_s']:.1f} tok/s transformers={hf:.1f} tok/s" if hf else f"engine={r['engine']['tok_s']:.1f} tok/s")
PY
)
echo "gpu_check: tests=$tests $summary vllm=$vllm"
