"""Reading source files within bounds: which files a folder yields, and how much of one is read.

A folder's symbolic links are followed only while they stay inside it (unless
``follow_symlinks``); only regular files are opened, without blocking, and a file found in a
folder must still be the one listed; a file larger than ``max_bytes`` (:data:`MAX_FILE_BYTES`)
is refused from its size, and a text file whose first :data:`SNIFF_BYTES` hold a NUL byte is
binary, with nothing more of it read. Each problem becomes one line (a file skipped, or an
error naming it), never a traceback, a hang or a read of gigabytes. See ``docs/indexing.md``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Collection, Iterator
from pathlib import Path, PurePath
from typing import BinaryIO

from .._core._errors import InvalidInput, PermissionDenied
from .._core._jsonl import shown_size

__all__ = [
    "MAX_CHAT_FILE_BYTES",
    "MAX_FILE_BYTES",
    "SNIFF_BYTES",
    "SourceReader",
    "Unreadable",
    "not_a_file",
    "shown_size",
]

MAX_FILE_BYTES = 8 * 1024 * 1024
"""The largest source file :func:`~graphfuse.indexing.read_sources` reads by default (8 MiB, twice
the longest novels), and the longest line of a ``.jsonl`` file. Indexing one document takes
about 60 times its size in memory at its peak (its tokens, chunks, vectors and relations: 575 MB
for an 8 MiB text file with the hashing embedder), so a larger file is refused from its size,
before it is read: named itself, with :class:`~graphfuse.InvalidInput`; found in a folder,
skipped with a line. Raise it with ``read_sources(..., max_file_bytes=...)`` or
``graphfuse index --max-file-size``."""

MAX_CHAT_FILE_BYTES = 64 * 1024 * 1024
"""The largest chat export file :func:`~graphfuse.indexing.read_whatsapp` and
:func:`~graphfuse.indexing.read_slack` read by default (64 MiB): a WhatsApp export of years of a
busy group, or a large workspace's Slack ``users.json``, outgrows :data:`MAX_FILE_BYTES`, and a
chat message is far shorter than a document (so it costs less memory per byte indexed: reading a
32 MiB WhatsApp export of 381,300 messages peaks at 417 MB resident, 7 s). A larger
file is refused from its size, before it is read, with :class:`~graphfuse.InvalidInput` naming
it. Set it with ``max_file_bytes=`` or ``graphfuse index --chat ... --max-file-size``."""

SNIFF_BYTES = 8192
"""How much of a text file is read to tell whether it is binary (a NUL byte in it): the rest of a
binary file is never read."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_FOLLOW_HINT = "follow_symlinks=True or --follow-symlinks reads it"


class Unreadable(Exception):
    """A source file that cannot be read as text: ``where`` (``":line"`` or ``""``) and ``why``.

    ``denied`` when the operating system refused to open it (raised as
    :class:`~graphfuse.PermissionDenied` for a file named itself).
    """

    def __init__(self, where: str, why: str, *, denied: bool = False) -> None:
        super().__init__(where, why)
        self.where, self.why, self.denied = where, why, denied

    def error(self, path: Path) -> Exception:
        """The error to raise for ``path`` named itself."""
        message = f"{path}{self.where}: {self.why}"
        return PermissionDenied(message) if self.denied else InvalidInput(message)


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a file"


def not_a_file(path: Path) -> Exception:
    """The error for a path named itself that is neither a regular file nor a directory: what it
    is instead (a named pipe, a device, a broken symbolic link, nothing), or that it may not be
    looked at."""
    try:
        mode = os.stat(path).st_mode
    except PermissionError:
        return PermissionDenied(f"{path}: permission denied")
    except FileNotFoundError:
        if os.path.islink(path):
            return InvalidInput(f"{path}: a broken symbolic link (to {os.readlink(path)})")
        return InvalidInput(f"{path}: no such file or directory")
    except OSError as exc:
        return InvalidInput(f"{path}: {exc.strerror or exc}")
    return InvalidInput(f"{path}: {_kind(mode)}, not a regular file")


def _reason(exc: OSError, listed: bool) -> Unreadable:
    if isinstance(exc, PermissionError):
        return Unreadable("", "permission denied", denied=True)
    if isinstance(exc, FileNotFoundError):
        return Unreadable("", "it was removed after the folder was listed" if listed else "no such file or directory")
    if exc.errno == errno.ELOOP:
        return Unreadable("", "too many levels of symbolic links")
    return Unreadable("", f"cannot be read: {exc.strerror or exc}")


class SourceReader:
    """Lists folders and opens files for one :func:`~graphfuse.indexing.read_sources` call.

    Remembers each file a folder listed (its device and inode), so that reading it later checks
    it is still that file.
    """

    def __init__(self, *, max_bytes: int = MAX_FILE_BYTES, follow_symlinks: bool = False) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise InvalidInput(f"max_file_bytes must be a positive number of bytes, got {max_bytes!r}")
        self.max_bytes = max_bytes
        self.follow_symlinks = follow_symlinks
        self._listed: dict[str, tuple[int, int]] = {}

    # -- folders ---------------------------------------------------------------------------

    def folder(
        self,
        root: Path,
        suffixes: Collection[str],
        on_skip: Callable[[str, str], None] | None = None,
        *,
        on_unsupported: Callable[[str], None] | None = None,
        prune: Callable[[str], bool] | None = None,
    ) -> list[tuple[Path, str]]:
        """``(file, path relative to root)`` of each file with one of ``suffixes`` in ``root``, in
        path order; hidden names (starting with a dot) and the folders ``prune(relative path)``
        accepts are left out, every other file of those suffixes that is not read is told to
        ``on_skip(path, why)``, and every regular file of another suffix to ``on_unsupported(path)``."""
        walk = _Walk(root, suffixes, self.follow_symlinks, on_skip, on_unsupported, prune)
        found = walk.run()
        for path, _, identity in found:
            self._listed[str(path)] = identity
        return [(path, rel) for path, rel, _ in found]

    # -- files -----------------------------------------------------------------------------

    def open(self, path: Path) -> BinaryIO:
        """``path`` opened for reading, once it is known to be a regular file (and, when a folder
        listed it, the file listed); :class:`Unreadable` otherwise."""
        listed = self._listed.get(str(path))
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except OSError as exc:
            raise _reason(exc, listed is not None) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Unreadable("", f"{_kind(info.st_mode)}, not a regular file")
            if listed is not None and (info.st_dev, info.st_ino) != listed:
                raise Unreadable("", "it was replaced after the folder was listed")
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read(self, path: Path) -> bytes:
        """The bytes of text file ``path``, at most ``max_bytes`` of them; :class:`Unreadable` for
        a file that is larger (told from its size, before reading), binary (a NUL byte in its first
        :data:`SNIFF_BYTES`: the rest is not read) or cannot be read."""
        with self.open(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > self.max_bytes:
                raise self._too_large(size)
            try:
                head = fh.read(SNIFF_BYTES)
                if b"\0" in head:
                    raise Unreadable("", "a binary file, not text")
                pieces, total = [head], len(head)
                while total <= self.max_bytes:
                    # What its size promises, or a block more when it grew since (never a buffer of
                    # max_bytes for a small file: read(n) allocates n).
                    piece = fh.read(min(max(size - total, 1 << 16), self.max_bytes + 1 - total))
                    if not piece:
                        break
                    pieces.append(piece)
                    total += len(piece)
            except OSError as exc:
                raise _reason(exc, True) from None
        if total > self.max_bytes:  # (it grew while being read)
            raise self._too_large(total)
        return b"".join(pieces)

    def lines(self, fh: BinaryIO, where: str) -> Iterator[tuple[int, bytes]]:
        """``(line number, line)`` of an opened file; a line longer than ``max_bytes`` raises
        :class:`~graphfuse.InvalidInput` naming ``where:line`` (it is not read whole)."""
        lineno = 0
        while True:
            try:
                raw = fh.readline(self.max_bytes + 1)
            except OSError as exc:
                raise InvalidInput(f"{where}: cannot be read: {exc.strerror or exc}") from None
            if not raw:
                return
            lineno += 1
            if len(raw) > self.max_bytes:
                raise InvalidInput(
                    f"{where}:{lineno}: a line longer than {shown_size(self.max_bytes)}, the limit for one "
                    "record (max_file_bytes or --max-file-size raises it)"
                )
            yield lineno, raw

    def _too_large(self, size: int) -> Unreadable:
        return Unreadable(
            "",
            f"{shown_size(size)}, over the {shown_size(self.max_bytes)} limit for one file "
            "(max_file_bytes or --max-file-size raises it)",
        )


class _Walk:
    """One folder listed: its real tree first, then its symbolic links, each judged by its target."""

    def __init__(
        self,
        root: Path,
        suffixes: Collection[str],
        follow: bool,
        on_skip: Callable[[str, str], None] | None,
        on_unsupported: Callable[[str], None] | None = None,
        prune: Callable[[str], bool] | None = None,
    ) -> None:
        self.on_unsupported = on_unsupported
        self.prune = prune
        self.root = root
        self.base = os.path.realpath(root)
        self.suffixes = frozenset(s.lower() for s in suffixes)
        self.follow = follow
        self.on_skip = on_skip
        self.found: list[tuple[Path, str, tuple[int, int]]] = []
        self.by_identity: dict[tuple[int, int], str] = {}  # file -> the relative path it is read as
        self.folders: dict[str, str] = {self.base: ""}  # real folder -> the relative path it is read as
        self.links: list[tuple[Path, str]] = []

    def run(self) -> list[tuple[Path, str, tuple[int, int]]]:
        self.walk(self.root, "", linked=False)
        done = 0
        while done < len(self.links):  # (following a link to a folder may find more links)
            path, rel = self.links[done]
            done += 1
            self.link(path, rel)
        return sorted(self.found, key=lambda f: f[1].split("/"))

    def skip(self, path: Path, why: str) -> None:
        if self.on_skip is not None:
            self.on_skip(str(path), why)

    def wanted(self, name: str) -> bool:
        return PurePath(name).suffix.lower() in self.suffixes

    def inside(self, target: str) -> bool:
        return target == self.base or target.startswith(self.base.rstrip(os.sep) + os.sep)

    def walk(self, folder: Path, prefix: str, *, linked: bool) -> None:
        """List ``folder`` (read as ``prefix``); ``linked`` when reached through a followed link."""
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            self.skip(folder, f"a folder that cannot be listed: {exc.strerror or exc}")
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue  # hidden: .git, .obsidian, .trash, .venv
            path, rel = folder / entry.name, prefix + entry.name
            try:
                if entry.is_symlink():
                    self.links.append((path, rel))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # (gone since the listing)
            if stat.S_ISDIR(info.st_mode):
                if self.prune is None or not self.prune(rel):
                    self.enter(path, rel, os.path.realpath(path), linked=linked)
            elif self.wanted(entry.name):
                self.add(path, rel, info, linked=linked)
            elif self.on_unsupported is not None and stat.S_ISREG(info.st_mode):
                self.on_unsupported(str(path))

    def enter(self, path: Path, rel: str, real: str, *, linked: bool) -> None:
        if real in self.folders:
            return  # (a folder reached again through a followed link: read once)
        self.folders[real] = rel
        self.walk(path, rel + "/", linked=linked)

    def add(self, path: Path, rel: str, info: os.stat_result, *, linked: bool) -> None:
        if not stat.S_ISREG(info.st_mode):
            self.skip(path, f"{_kind(info.st_mode)}, not a regular file")
            return
        identity = (info.st_dev, info.st_ino)
        if linked and identity in self.by_identity:  # (the folder's own files may be hard links)
            self.skip(path, f"the same file as {self.by_identity[identity]}, which is read already")
            return
        self.by_identity.setdefault(identity, rel)
        self.found.append((path, rel, identity))

    def link(self, path: Path, rel: str) -> None:
        target = os.path.realpath(path)
        try:
            info = os.stat(path)
        except OSError:
            if self.wanted(path.name):
                self.skip(
                    path, "a broken symbolic link" + (f" (to {os.readlink(path)})" if os.path.islink(path) else "")
                )
            return
        inside = self.inside(target)
        if stat.S_ISDIR(info.st_mode):
            if target in self.folders:
                shown = self.folders[target] or "the folder itself"
                self.skip(path, f"a symbolic link to {shown}, which is read already")
            elif not inside and not self.follow:
                self.skip(
                    path, f"a symbolic link to the folder {target}, outside the folder: not followed ({_FOLLOW_HINT})"
                )
            else:
                self.enter(path, rel, target, linked=True)
            return
        if not self.wanted(path.name):
            return
        if not stat.S_ISREG(info.st_mode):
            self.skip(path, f"a symbolic link to {_kind(info.st_mode)}, not a regular file")
        elif (info.st_dev, info.st_ino) in self.by_identity:
            self.skip(path, f"a symbolic link to {self.by_identity[(info.st_dev, info.st_ino)]}, which is read already")
        elif not inside and not self.follow:
            self.skip(path, f"a symbolic link to {target}, outside the folder: not followed ({_FOLLOW_HINT})")
        else:
            self.add(path, rel, info, linked=True)
