#!/usr/bin/env bash
# The GPU path in one go, for the first minutes a CUDA machine is lent: the engine's tests with every engine
# on "cuda" (INFRAWIKI_DEVICE; transformers references stay on the CPU in float32), then the benchmark with
# random weights of Qwen2.5-7B's shape against transformers on the same device. Results go to $OUT (or
# ./gpu-check): the pytest log, the benchmark's JSON and nvidia-smi's view of the device.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-gpu-check}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/nvidia-smi.csv"
"$PY" -c "import torch; assert torch.cuda.is_available(), 'torch sees no CUDA device'; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())"
INFRAWIKI_DEVICE=cuda timeout "${TEST_TIMEOUT_S:-300}" "$PY" -m pytest -q -p no:cacheprovider -m "not slow" \
    tests/inference/test_numerics_vs_transformers.py tests/inference/test_scheduler.py \
    tests/inference/test_sampling.py tests/inference/test_guided_decoding.py tests/inference/test_openai_client.py \
    2>&1 | tee "$OUT/pytest-cuda.log" | tail -20 || echo "engine tests on cuda failed (see $OUT/pytest-cuda.log)"
timeout "${BENCH_TIMEOUT_S:-300}" "$PY" -m inference.bench --device cuda --random-7b --requests 16 --json \
    > "$OUT/bench-random-7b.json" && tail -c 2000 "$OUT/bench-random-7b.json"
