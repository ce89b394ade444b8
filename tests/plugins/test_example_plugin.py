"""The sample third-party plugin (examples/graphfuse-example-plugin), really installed by pip.

A throwaway virtualenv gets a regular (non-editable) ``pip install`` of the plugin; that venv's
Python then finds it through entry-point discovery, lists it with ``graphfuse plugins`` and runs
it in a pipeline. The project venv is never modified. Run as a script (``python
test_example_plugin.py``), this module is the probe executed inside the throwaway venv.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import site
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import graphfuse
from graphfuse import Document, VectorRecord
from graphfuse.plugins import Components, build_pipeline, get_registry
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

PLUGIN = Path(__file__).resolve().parents[2] / "examples" / "graphfuse-example-plugin"

pytestmark = pytest.mark.slow  # pip installs the plugin into a throwaway venv

DIST = "graphfuse-example-plugin"


class Venv:
    """A virtualenv created for one test module, with the plugin installed into it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        self.env = {k: v for k, v in os.environ.items() if k not in {"GRAPHFUSE_LOAD_PLUGINS", "PYTHONPATH"}}
        self.env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1", PYTHONNOUSERSITE="1")

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [str(self.python), *args], env=self.env, capture_output=True, text=True, timeout=180, check=False
        )
        assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def purelib(self) -> Path:
        return Path(self.run("-c", "import sysconfig; print(sysconfig.get_path('purelib'))").strip())


def _bridge(env: Venv) -> None:
    """Make the project venv's packages (graphfuse, its deps, pip, hatchling) visible in ``env``.

    ``--system-site-packages`` would not do it: a venv made from a venv sees the *base*
    interpreter's site-packages, not the parent venv's. ``site.addsitedir`` also runs the
    parent's ``.pth`` files, which the editable installs of graphfuse rely on. The throwaway
    venv's own site-packages stays first on ``sys.path``, so the installed plugin is found there.
    """
    # The graphfuse under test first: in a worktree run with PYTHONPATH, the project venv's
    # editable install may point at another checkout.
    dirs = [str(Path(graphfuse.__file__).resolve().parents[1]), *site.getsitepackages()]
    line = "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dict.fromkeys(dirs))
    (env.purelib() / "_graphfuse_project_env.pth").write_text(line + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    env = Venv(tmp_path_factory.mktemp("plugin-venv") / "venv")
    venv.create(env.root, with_pip=False)
    _bridge(env)
    env.run("-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(PLUGIN))
    return env


@pytest.fixture(scope="module")
def probe(env: Venv) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(env.run(__file__))
    return result


def test_installed_into_the_throwaway_venv(env: Venv, probe: dict[str, Any]) -> None:
    assert probe["version"] == "0.1.0"
    # loaded from the venv's site-packages (a real copy), not from examples/.../src
    assert Path(probe["module"]).is_relative_to(env.purelib())
    assert probe["editable"] is False
    # ... running the graphfuse under test
    assert probe["graphfuse"] == graphfuse.__file__


def test_discovered_by_the_registry(probe: dict[str, Any]) -> None:
    assert probe["plugin"] == {
        "name": "example",
        "version": "0.1.0",
        "hooks": ["register_stages"],
        "registers": {"stage": ["keyword_boost"]},
        "error": None,
    }
    assert "keyword_boost" in probe["stages"]


def test_listed_by_the_cli(env: Venv) -> None:
    listed = {p["name"]: p for p in json.loads(env.run("-m", "graphfuse.cli", "plugins"))}
    assert listed["example"]["version"] == "0.1.0"
    assert listed["example"]["registers"] == {"stage": ["keyword_boost"]}
    assert listed["example"]["error"] is None


def test_keyword_signal_changes_the_ranking(probe: dict[str, Any]) -> None:
    assert probe["before"] == ["close", "middle", "far"]
    assert probe["after"] == ["far", "middle", "close"]
    assert probe["keyword"] == {"far": 1.0, "middle": 0.75, "close": 0.0}
    assert probe["top_keyword_contribution"] == pytest.approx(0.5)


def test_needs_hydrated_candidates(probe: dict[str, Any]) -> None:
    assert "needs hydrated candidates" in probe["unhydrated_error"]
    assert probe["unhydrated_cause"] == "InvalidInput"


def test_not_installed_in_the_project_venv() -> None:
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution(DIST)
    get_registry().reload()
    assert "keyword_boost" not in get_registry().names("stage")


# ---- the probe, run by the throwaway venv's Python ----


class QueryVector:
    """An embedder whose query vector is fixed, so the semantic order is known in advance."""

    dimension = 2

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    async def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


async def components() -> Components:
    graph = InMemoryGraphStore()
    vectors = LocalVectorStore(None, dimension=2)
    await graph.store_documents(
        [
            Document("close", "a text about something else entirely"),
            Document("middle", "the graph fusion library for retrieval"),
            Document("far", "graph retrieval fusion with keywords"),
        ]
    )
    # cosine with the query vector [1, 0]: close 0.99, middle 0.8, far 0.6
    await vectors.upsert(
        [
            VectorRecord("close", [0.99, 0.141]),
            VectorRecord("middle", [0.8, 0.6]),
            VectorRecord("far", [0.6, 0.8]),
        ]
    )
    return Components(graph_store=graph, vector_store=vectors, embedder=QueryVector())


async def _probe() -> dict[str, Any]:
    import graphfuse_example_plugin

    dist = importlib.metadata.distribution(DIST)
    direct_url = json.loads(dist.read_text("direct_url.json") or "{}")
    plugin = next(p for p in get_registry().plugins() if p.name == "example")

    comps = await components()
    vector_only = build_pipeline({"stages": ["semantic", "hydrate"], "scorer": {"name": "weighted"}}, comps)
    boosted = build_pipeline(
        {
            "stages": ["semantic", "hydrate", "keyword_boost"],
            "scorer": {"name": "weighted", "weights": {"semantic": 0.5, "keyword": 0.5}},
        },
        comps,
    )
    query = "graph retrieval fusion keywords"
    before = await vector_only.aretrieve(query, top_k=3)
    after = await boosted.aretrieve(query, top_k=3)
    try:
        await build_pipeline({"stages": ["semantic", "keyword_boost"]}, comps).aretrieve("graph", top_k=1)
    except Exception as err:  # the pipeline wraps the stage's error; its cause is the stage's own
        unhydrated = (str(err), type(err.__cause__).__name__)
    else:
        unhydrated = ("", "")
    return {
        "version": dist.version,
        "module": graphfuse_example_plugin.__file__,
        "graphfuse": graphfuse.__file__,
        "editable": direct_url.get("dir_info", {}).get("editable", False),
        "plugin": {
            "name": plugin.name,
            "version": plugin.version,
            "hooks": list(plugin.hooks),
            "registers": {k: list(v) for k, v in plugin.registers.items()},
            "error": plugin.error,
        },
        "stages": get_registry().names("stage"),
        "before": [r.id for r in before],
        "after": [r.id for r in after],
        "keyword": {r.id: r.signals["keyword"] for r in after},
        "top_keyword_contribution": after[0].contributions["keyword"],
        "unhydrated_error": unhydrated[0],
        "unhydrated_cause": unhydrated[1],
    }


if __name__ == "__main__":
    sys.stdout.write(json.dumps(asyncio.run(_probe())))
    sys.stdout.flush()
