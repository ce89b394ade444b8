"""Rebuild the HTTPX documentation corpus these questions were written for (standard library only).

    python build_corpus.py GITDIR OUTDIR

GITDIR is a git directory of https://github.com/encode/httpx (a clone's ``.git`` or a bare
mirror) holding commit ``ae1b9f66238f75ced3ced5e4485408435de10768``. OUTDIR receives
``corpus/`` (the 23 ``docs/**/*.md`` files as stored, folders kept: what ``graphfuse index``
reads) and ``corpus.jsonl`` (``{"id", "title", "text"}`` a line: ``id`` the path under
``docs/``, ``title`` the first level-1 heading outside code fences without markup, else the
file stem, ``text`` the raw markdown), as ``../shared/data/docs_pydantic`` is built.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

COMMIT = "ae1b9f66238f75ced3ced5e4485408435de10768"


def title_of(text: str, page: str) -> str:
    fence = None
    for line in text.splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            tok = m.group(1)[0] * 3
            fence = tok if fence is None else (None if tok == fence else fence)
            continue
        if fence is None and re.match(r"^# +\S", line):
            t = re.sub(r"\s*\{\s*#[^}]*\}\s*$", "", line[2:])
            t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
            t = re.sub(r"<[^>]+>", "", t).replace("`", "").replace("*", "")
            t = re.sub(r"\s+", " ", re.sub(r"\s+#+\s*$", "", t)).strip()
            if t:
                return t
    return Path(page).stem


def main(gitdir: str, out: str) -> None:
    git = ["git", "--git-dir", gitdir]
    names = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", COMMIT, "docs"], check=True, capture_output=True, text=True
    )
    pages = sorted(p for p in names.stdout.splitlines() if p.endswith(".md"))
    rows = []
    for path in pages:
        raw = subprocess.run([*git, "show", f"{COMMIT}:{path}"], check=True, capture_output=True).stdout
        page = path[len("docs/") :]
        dest = Path(out, "corpus", page)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(raw)
        text = raw.decode("utf-8")
        rows.append({"id": page, "title": title_of(text, page), "text": text})
    with open(Path(out, "corpus.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print(f"{len(rows)} pages -> {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
