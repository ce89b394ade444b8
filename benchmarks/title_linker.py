"""TitleLinker build time for 2.5k-40k titles (it must stay near linear in the titles).

python benchmarks/title_linker.py   # -> benchmarks/results/title_linker.json
"""

from __future__ import annotations

import random
import time

from _common import RESULTS, write_results

from graphfuse.indexing import TitleLinker


def main() -> None:
    rows = []
    for n in (2_500, 5_000, 10_000, 20_000, 40_000):
        rng = random.Random(n)
        titles = [f"{rng.choice(['North', 'South', 'Old', 'New'])} Title {rng.randrange(10**9)} {i}" for i in range(n)]
        linker = TitleLinker()
        started = time.perf_counter()
        for i, title in enumerate(titles):
            linker.add(title, f"d{i}")
        seconds = time.perf_counter() - started
        rows.append({"titles": n, "add_seconds": round(seconds, 4), "per_title_us": round(seconds / n * 1e6, 2)})
    write_results(RESULTS / "title_linker.json", "title_linker", {}, rows)


if __name__ == "__main__":
    main()
