"""Benchmark: what Inductor costs per model of the models tier, each of which the compile tier
compiles (``kit.tiers.compile.cases``: the figures there).

For each Hugging Face model of the standard's models tier, in a process of its own with an empty
Inductor cache (``TORCHINDUCTOR_CACHE_DIR``, a new directory, so nothing a run before compiled
is reused): build it as the models tier does, compile it with ``module.compile()`` (Inductor,
the cpu vendor's backend), and time the first call (the compile and run), the call on one batch
row (the recompile the tier records) and, with ``--train``, the training step's forward and
backward compiled. One JSON line per model; the sum at the end. Usage:

    .venv/bin/python bench/compiled_model_cost.py [--model resnet ...] [--train] [--warm]

``--warm`` runs each model twice in one cache directory and reports the second: the cost on a
machine whose cache holds the model already (a rerun of a complete certify).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

#: This script, run again as the child that measures one model.
_CHILD = "--child"


def measure(model: str, train: bool) -> dict[str, Any]:
    """In the child: the one model's compile costs, in seconds."""
    import torch

    from kit.standard import load_standard
    from kit.tiers.compile.compiled_models import second_batch
    from kit.tiers.models.cases import SOURCES, find_case, training_case
    from kit.tiers.models.flows import call_module
    from kit.tiers.models.training import forward_backward

    torch.set_num_threads(max(1, (os.cpu_count() or 1)))
    standard = load_standard()
    case = find_case(standard, f"models/hf/{model}/eager")
    built = SOURCES[case.source].build(case)
    module = built.module
    module.compile()
    figures: dict[str, Any] = {"model": model}
    start = time.perf_counter()
    call_module(module, built.inputs)
    figures["forward_s"] = round(time.perf_counter() - start, 1)
    second = second_batch(built.inputs)
    if second is not None:
        start = time.perf_counter()
        call_module(module, second)
        figures["recompile_s"] = round(time.perf_counter() - start, 1)
    if train:
        trained = SOURCES[case.source].build(case)
        trained.module.compile()
        start = time.perf_counter()
        forward_backward(trained.module, trained.inputs, training_case(case))
        figures["train_s"] = round(time.perf_counter() - start, 1)
    return figures


def _hf_models() -> list[str]:
    from kit.standard import load_standard

    ids = load_standard().test_ids("models")
    return sorted({i.split("/")[2] for i in ids if i.startswith("models/hf/")
                   and i.endswith("/eager")})


def _run_child(model: str, train: bool, cache: str) -> dict[str, Any]:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
    argv = [sys.executable, __file__, _CHILD, model] + (["--train"] if train else [])
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"model": model, "error": tail}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == _CHILD:
        print(json.dumps(measure(sys.argv[2], "--train" in sys.argv)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", help="a Hugging Face model (default: all)")
    parser.add_argument("--train", action="store_true", help="also the training step compiled")
    parser.add_argument("--warm", action="store_true", help="the second run in one cache")
    args = parser.parse_args()
    total = 0.0
    for model in args.model or _hf_models():
        with tempfile.TemporaryDirectory(prefix="ckit-inductor-") as cache:
            figures = _run_child(model, args.train, cache)
            if args.warm and "error" not in figures:
                figures = {**_run_child(model, args.train, cache), "cache": "warm"}
        print(json.dumps(figures), flush=True)
        total += sum(v for k, v in figures.items() if k.endswith("_s"))
    print(json.dumps({"total_s": round(total, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
