"""Result cache: a re-run with nothing changed costs one read.

The scanned tree is untrusted (a pull request can add any file), so the cache is built so that
nothing a project plants can be mistaken for a result, let alone run:
- results are plain JSON, decoded field by field into the result types (never pickle);
- each file carries an HMAC-SHA256 under a per-user secret kept in the user's cache home,
  outside every project; a file without the right MAC is ignored, as is one of the wrong shape;
- by default the cache lives in the user's cache home too (`$GBREAK_LINT_CACHE_DIR`, else
  `$XDG_CACHE_HOME/gbreak-lint`, else `~/.cache/gbreak-lint`), one folder per project root;
  `--cache-dir` / `cache-dir = "..."` move it, `--no-cache` turns it off.
The key covers everything a result depends on: the content of every project file, the
configuration and selection, and the tool itself (its source, rules and knowledge files).
A cache that cannot be read or written is ignored: the scan simply runs.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from .catalog import builtin_rules_dir
from .diagnostics import LintResult
from .files import read_regular, read_regular_file
from .parse import MAX_FILE_BYTES
from .plain import PlainDataError, from_plain, to_plain

FORMAT = 1
KEEP = 4  # result files kept per project
TREES_KEPT = 8  # the file digests of the last runs that stored a result reading which modules hold a text
MAX_CACHE_BYTES = 256 * 1024 * 1024  # a larger "result" is not ours
SECRET_BYTES = 32


def user_cache_home() -> Path:
    explicit = os.environ.get("GBREAK_LINT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "gbreak-lint"


def run_fingerprint(settings: str, extra_rules: Path | None) -> str | None:
    """What every result of a run depends on besides the files: the tool itself (its source,
    rules and knowledge), the settings and the project's extra rules."""
    digest = hashlib.sha256()
    digest.update(tool_fingerprint().encode())
    digest.update(settings.encode())
    if extra_rules is not None and extra_rules.is_dir():
        for rule in sorted(extra_rules.glob("*.yaml")):
            data = read_regular_file(rule, MAX_CACHE_BYTES)
            if data is None:
                return None
            digest.update(data)
    return digest.hexdigest()


def cache_key(fingerprint: str, digests: dict[str, str], reported: list[Path]) -> str:
    """The key of a whole run's result: the run's fingerprint, every project file's content
    and the files reported on."""
    digest = hashlib.sha256(fingerprint.encode())
    for path in sorted(digests):
        digest.update(path.encode() + b"\0" + digests[path].encode())
    digest.update(b"\1" + "\0".join(sorted(map(str, reported))).encode())
    return digest.hexdigest()


def content_digests(files: list[Path], overlay: dict[str, bytes] | None = None,
                    known: dict | None = None) -> dict[str, str]:
    """Each file's content digest. `known` (path -> [stat key, digest] from an earlier run)
    spares reading a file whose size, times and inode are all unchanged (as git's index does):
    a pre-commit run on a large repository would otherwise read all of it."""
    out = {}
    for path in files:
        name = str(path)
        if overlay and name in overlay:
            out[name] = hashlib.sha1(overlay[name]).hexdigest()
            continue
        seen = (known or {}).get(name)
        stamp = stat_key(path)
        if stamp is not None and isinstance(seen, list) and len(seen) == 2 and seen[0] == stamp:
            out[name] = seen[1]
        else:
            out[name] = content_digest(path).hex()
    return out


def stat_key(path: Path) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"


def content_digest(path: Path) -> bytes:
    """What a file's result depends on: its bytes, or for a file the scan does not read (too
    large, unreadable, not regular) the reason plus its size and time, since only the notice
    comes of it."""
    try:
        return hashlib.sha1(read_regular(path, MAX_FILE_BYTES)).digest()
    except OSError as err:
        try:
            info = path.stat()
            return f"{err}:{info.st_size}:{info.st_mtime_ns}".encode()
        except OSError:
            return f"{err}".encode()


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """Hash of gbreak-lint's own code, rules and knowledge: a new build never reuses results."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")) + sorted(package.rglob("*.yaml")) + \
            sorted(builtin_rules_dir().glob("*.yaml")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


class SignedStore:
    """Signed JSON documents in one folder: `read` gives back only what `write` wrote with this
    user's secret (anything else there is ignored), writes are atomic."""

    def __init__(self, folder: Path, secret: bytes | None, keep: int | None = None):
        self.folder = folder
        self.secret = secret
        self.keep = keep  # documents kept (the newest), None: all

    def read(self, name: str) -> dict | None:
        if self.secret is None:
            return None
        data = read_regular_file(self.folder / name, MAX_CACHE_BYTES)
        if data is None:
            return None
        try:
            envelope = json.loads(data)
            payload = envelope["payload"]
            expected = self._mac(payload.encode())
            if not isinstance(envelope.get("mac"), str) or not hmac.compare_digest(envelope["mac"], expected):
                return None
            body = json.loads(payload)
            return body if isinstance(body, dict) and body.get("format") == FORMAT else None
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            return None  # corrupt, foreign or planted: ignored, the scan runs

    def has(self, name: str) -> bool:
        """Whether a document of that name is there (not whether it is valid)."""
        return self.secret is not None and (self.folder / name).is_file()

    def write(self, name: str, body: dict) -> None:
        if self.secret is None:
            return
        payload = json.dumps({"format": FORMAT, **body}, separators=(",", ":"))
        envelope = json.dumps({"mac": self._mac(payload.encode()), "payload": payload})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(envelope)
            os.replace(tmp, self.folder / name)
            if self.keep is not None:
                kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
                for old in kept[:-self.keep]:
                    old.unlink(missing_ok=True)
        except OSError:
            return

    def _mac(self, data: bytes) -> str:
        assert self.secret is not None  # load/store return early without one
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()


class ProjectStore:
    """The caches of one project root: whole-run results (a re-run with nothing changed),
    Dynamo task results and entry-point facts by what they read (a run after an edit), and
    the modules' import summaries and indexes (by content)."""

    def __init__(self, project_root: Path, folder: Path | None = None):
        home = user_cache_home()
        base = (folder if folder is not None else home) / "results"
        project_id = hashlib.sha256(str(project_root.resolve()).encode()).hexdigest()[:16]
        secret = _secret(home, project_root)
        self.results = SignedStore(base / project_id, secret, keep=KEEP)
        self.tasks = SignedStore(base / project_id / "tasks", secret)
        self.entries = SignedStore(base / project_id / "entries", secret)
        self.summaries = SignedStore(base / project_id / "summaries", secret, keep=2)
        self.modules = SignedStore(base / project_id / "modules", secret)
        self.trees = SignedStore(base / project_id / "trees", secret, keep=TREES_KEPT)

    def file_stats(self) -> dict:
        """path -> [stat key, content digest], as the last run saw the files."""
        files = (self.summaries.read("stats.json") or {}).get("files")
        return files if isinstance(files, dict) else {}

    def keep_file_stats(self, digests: dict[str, str], known: dict) -> None:
        files = {path: [stat_key(Path(path)), digest] for path, digest in digests.items()}
        if files != known:
            self.summaries.write("stats.json", {"files": files})

    def load_result(self, key: str, still: Callable[[object], bool] = lambda reads: True) -> LintResult | None:
        """`still(installed)`: whether the installed modules the result read are unchanged."""
        body = self.results.read(_result_name(key))
        if body is None or body.get("key") != key or not still(body.get("installed", {})):
            return None
        try:
            return from_plain(LintResult, body["result"])
        except (KeyError, PlainDataError, TypeError, ValueError, RecursionError):
            return None

    def store_result(self, key: str, result: LintResult, installed: dict[str, str] | None = None) -> None:
        """`installed`: the installed modules the run read, name -> file signature."""
        self.results.write(_result_name(key), {"key": key, "result": to_plain(result),
                                               "installed": installed or {}})


def _result_name(key: str) -> str:
    return f"result-{key[:32]}.json"


def _secret(home: Path, project_root: Path) -> bytes | None:
    """The per-user signing secret, created on first use (mode 0600). None (no cache) when it
    cannot be had, or when the cache home lies inside the scanned project, which could then
    have planted the secret itself."""
    path = home / "secret"
    try:
        if path.resolve().is_relative_to(project_root.resolve()):
            return None
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(SECRET_BYTES))
    except FileExistsError:
        pass
    except OSError:
        return None
    data = read_regular_file(path, SECRET_BYTES)
    return data if data is not None and len(data) == SECRET_BYTES else None
