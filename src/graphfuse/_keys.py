"""API keys: a JSON file of hashed keys, each bound to one tenant.

A key is ``gfk_<key id>_<secret>``; the file keeps only the SHA-256 of each key, compared in
constant time (:func:`hmac.compare_digest`), and is rewritten atomically with mode 0600 under an
exclusive lock on ``<file>.lock``, so concurrent ``graphfuse keys`` commands never lose a change
and readers, who take no lock, see the old file or the new one. See ``docs/server.md``, "Keys
and tenants".
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ._core._errors import ConnectionFailed, InvalidInput, NotFound, PermissionDenied, StoreCorrupted

__all__ = ["TENANT_PATTERN", "KeyFile", "KeyFileDamaged", "KeyRecord", "check_tenant"]

FORMAT = "graphfuse-keys"
TENANT_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A whole tenant name (match it with ``fullmatch``: ``$`` would let a trailing newline through)."""
_KEY = re.compile(r"gfk_([0-9a-f]{8})_[A-Za-z0-9_-]{43}")
_LOCK_TIMEOUT_S = 30.0
_RACY_NS = 2_000_000_000  # a file changed this recently is compared by content on every look
_NEVER: tuple[int, ...] = (-1,)  # the stamp before the first read


def check_tenant(name: object) -> str:
    """Return ``name`` if it is a valid tenant name, else raise ``InvalidInput``."""
    if not isinstance(name, str) or not TENANT_PATTERN.fullmatch(name):
        raise InvalidInput(
            f"tenant name must be 1-64 letters, digits, '_', '.' or '-', starting with a letter or digit; got {name!r}"
        )
    return name


class KeyFileDamaged(StoreCorrupted):
    """The key file cannot be read as a GraphFuse key file (the message names it and why)."""


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class KeyRecord:
    """One stored key: its id, tenant, creation time and the SHA-256 of the key."""

    key_id: str
    tenant: str
    created_at: str
    sha256: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.key_id, "tenant": self.tenant, "created_at": self.created_at, "sha256": self.sha256}


class KeyFile:
    """The key file at ``path`` (created by :meth:`add` when missing).

    :meth:`tenant_for` is what a server calls per request: it re-reads the file when it
    changed (its inode, size, change or modification time, or its content while it is recent),
    and is safe to call from several threads.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, ...] | None = _NEVER
        self._digest: str | None = None
        self._records: tuple[KeyRecord, ...] = ()

    # -- reading ---------------------------------------------------------------------------

    def _bytes(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None
        except PermissionError as exc:
            raise PermissionDenied(f"key file {str(self.path)!r} cannot be read: permission denied") from exc
        except OSError as exc:
            raise KeyFileDamaged(f"key file {str(self.path)!r} is unreadable ({exc})") from exc

    def _read(self, data: bytes | None = None) -> list[KeyRecord]:
        if data is None:
            data = self._bytes()
        if data is None:
            return []
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise KeyFileDamaged(f"key file {str(self.path)!r} is unreadable ({exc})") from exc
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise KeyFileDamaged(
                f"key file {str(self.path)!r} is damaged: not valid JSON ({exc.msg} at character {exc.pos})"
            ) from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("keys"), list):
            raise KeyFileDamaged(f"key file {str(self.path)!r} is damaged or not a GraphFuse key file")
        out = []
        for i, item in enumerate(data["keys"]):
            fields = ("id", "tenant", "created_at", "sha256")
            if not isinstance(item, dict) or not all(isinstance(item.get(f), str) for f in fields):
                raise KeyFileDamaged(f"key file {str(self.path)!r} is damaged: entry {i} is malformed")
            if not TENANT_PATTERN.fullmatch(item["tenant"]):
                # A tenant name is a prefix of stored ids: "a/b" or "a\n" must never act as one.
                raise KeyFileDamaged(f"key file {str(self.path)!r} is damaged: entry {i} has an invalid tenant name")
            out.append(KeyRecord(item["id"], item["tenant"], item["created_at"], item["sha256"]))
        return out

    def records(self) -> list[KeyRecord]:
        """Every stored key (without secrets), in the order they were added."""
        return self._read()

    def _current(self) -> tuple[KeyRecord, ...]:
        """The current keys, re-read when the file may have changed.

        The file is looked at again when its device, inode, size, modification or change time
        differ from the last read (a file restored with its old size and modification time still
        has a new change time, which no one can set back), and while it changed less than
        ``_RACY_NS`` ago, when two writes can share every time stamp; it is parsed again only
        when its content differs (SHA-256), as git does with its index.
        """
        try:
            st = self.path.stat()
            stamp: tuple[int, ...] | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            racy = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _RACY_NS
        except FileNotFoundError:
            stamp, racy = None, True
        with self._lock:
            if stamp != self._stamp or racy:
                data = self._bytes()
                digest = None if data is None else hashlib.sha256(data).hexdigest()
                if digest != self._digest or self._stamp is _NEVER:
                    self._records = tuple(self._read(data))
                    self._digest = digest
                self._stamp = stamp
            return self._records

    def tenant_for(self, key: str) -> str | None:
        """The tenant of ``key``, or ``None`` when it is not a current key.

        Every stored hash is compared, in constant time, whatever the key looks like.
        """
        presented = _digest(key)
        tenant: str | None = None
        for record in self._current():
            if hmac.compare_digest(presented, record.sha256):
                tenant = record.tenant
        return tenant

    def tenants(self) -> set[str]:
        """The tenants that have at least one key."""
        return {r.tenant for r in self._current()}

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the file's exclusive lock (``<file>.lock``) for one read-modify-write."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        lock = FileLock(lock_path, timeout=_LOCK_TIMEOUT_S, mode=0o600)
        try:
            lock.acquire()
        except Timeout as exc:
            raise ConnectionFailed(
                f"key file {str(self.path)!r} stayed locked by another process for {_LOCK_TIMEOUT_S:.0f} s "
                f"(lock {str(lock_path)!r}); try again"
            ) from exc
        except PermissionError as exc:
            raise PermissionDenied(
                f"key file {str(self.path)!r}: cannot create its lock {str(lock_path)!r}: permission denied"
            ) from exc
        try:
            yield
        finally:
            lock.release()

    def _write(self, records: list[KeyRecord]) -> None:
        payload: dict[str, Any] = {"format": FORMAT, "keys": [r.to_json() for r in records]}
        fd, tmp = tempfile.mkstemp(prefix=".keys-", suffix=".tmp", dir=self.path.parent)
        try:
            os.chmod(tmp, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(payload, f, indent=2)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _sync_directory(self.path.parent)

    def add(self, tenant: str) -> tuple[KeyRecord, str]:
        """Create a key for ``tenant``: returns its record and the key itself (shown once, not stored)."""
        check_tenant(tenant)
        with self._locked():
            records = self._read()
            taken = {r.key_id for r in records}
            key_id = secrets.token_hex(4)
            while key_id in taken:
                key_id = secrets.token_hex(4)
            key = f"gfk_{key_id}_{secrets.token_urlsafe(32)}"
            created = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
            record = KeyRecord(key_id, tenant, created, _digest(key))
            self._write([*records, record])
        return record, key

    def revoke(self, key_id: str) -> KeyRecord:
        """Remove the key with id ``key_id`` (or the key itself); raises ``NotFound``."""
        match = _KEY.fullmatch(key_id)
        wanted = match.group(1) if match else key_id
        with self._locked():
            records = self._read()
            kept = [r for r in records if r.key_id != wanted]
            if len(kept) == len(records):
                raise NotFound(f"no key with id {wanted!r} in {str(self.path)!r}")
            self._write(kept)
        return next(r for r in records if r.key_id == wanted)


def _sync_directory(directory: Path) -> None:
    """fsync a directory so a rename in it survives a power loss (a no-op where unsupported)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
