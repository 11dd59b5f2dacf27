"""A scanned checkout is untrusted: nothing it holds is executed, planted caches are ignored,
odd files get a notice and the scan goes on (the README's promise)."""
import json
import os
import pickle
import stat

from gbreak_lint.cache import ProjectStore

from conftest import cache_home, run, run_json

BREAKING = "import torch\n\n\n@torch.compile\ndef f(x):\n    print('hi')\n    return x + 1\n"


class _Payload:
    """Unpickling this runs a command (what a planted cache file would do)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _plant_everywhere(root, marker):
    """Evil files under every name a result cache of ours has used or uses."""
    evil = pickle.dumps(_Payload(marker))
    legacy = root / ".gbreak_cache"
    legacy.mkdir()
    for name in ("result-" + "0" * 32 + ".pickle", "result-" + "f" * 32 + ".json", "index.pickle"):
        (legacy / name).write_bytes(evil)
    folder = ProjectStore(root).results.folder  # where this project's results really live
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(3):
        (folder / f"result-{i:032x}.json").write_bytes(evil)
    return folder


def _hostile_repo(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.py").write_text("TOKEN = 'do-not-read-me'\nprint(\n")
    (outside / "pkg").mkdir()
    (outside / "pkg" / "mod.py").write_text(BREAKING)
    (outside / "rules").mkdir()
    project("model.py", BREAKING)
    os.symlink(outside / "secret.py", project.root / "leak.py")
    os.symlink(outside / "pkg", project.root / "linked_pkg")
    os.mkfifo(project.root / "pipe.py")
    with open(project.root / "huge.py", "wb") as fh:  # 50 MB of valid Python
        fh.write(b"x = 1\n" * (50 * 1024 * 1024 // 6))
    (project.root / "pyproject.toml").write_text(
        f"[tool.gbreak-lint]\nextra-rules = '{outside / 'rules'}'\nbaseline = '{outside / 'b.json'}'\n")
    return outside


def test_hostile_repository(project, capsys, tmp_path_factory, tmp_path):
    _hostile_repo(project, tmp_path_factory)
    marker = tmp_path / "pwned"
    _plant_everywhere(project.root, marker)
    code, out, err = run(capsys, "check", project.root, "--format", "json")
    doc = json.loads(out)
    assert not marker.exists(), "a planted cache file was unpickled"
    assert code == 1
    assert [(os.path.basename(d["path"]), d["code"]) for d in doc["diagnostics"]] == [("model.py", "GBL303")]
    errors = {os.path.basename(e["path"]): e["message"] for e in doc["errors"]}
    assert "outside the project root" in errors["leak.py"]
    assert "not a regular file" in errors["pipe.py"]
    assert "too large" in errors["huge.py"]
    assert "do-not-read-me" not in out + err
    assert "'extra-rules' points outside the repository" in err
    assert "'baseline' points outside the repository" in err
    # a second run is served from our own cache (signed), still without running anything
    assert json.loads(run(capsys, "check", project.root, "--format", "json")[1]) == doc
    assert not marker.exists()
    # the attack as reported: a pickle under the exact name of the valid entry (in our folder,
    # and in the tree's .gbreak_cache/ where results used to live)
    real = max(ProjectStore(project.root).results.folder.glob("result-*.json"), key=lambda p: p.stat().st_mtime_ns)
    evil = pickle.dumps(_Payload(marker))
    real.write_bytes(evil)
    (project.root / ".gbreak_cache" / real.name.replace(".json", ".pickle")).write_bytes(evil)
    assert json.loads(run(capsys, "check", project.root, "--format", "json")[1]) == doc
    assert not marker.exists()


def test_corrupt_or_foreign_cache_is_ignored(project, capsys):
    project("model.py", BREAKING)
    cold = run_json(capsys, project.root)
    folder = ProjectStore(project.root).results.folder
    (result,) = folder.glob("result-*.json")
    envelope = json.loads(result.read_text())
    payload = json.loads(envelope["payload"])
    payload["result"]["diagnostics"] = []  # a forged "clean" result, MAC left as it was
    for forged in (json.dumps({"mac": envelope["mac"], "payload": json.dumps(payload)}),
                   "{not json", "", json.dumps({"mac": "0" * 64, "payload": envelope["payload"]}),
                   json.dumps([1, 2, 3])):
        result.write_text(forged)
        assert run_json(capsys, project.root) == cold


def test_wrongly_shaped_but_signed_result_is_ignored(project, capsys):
    """Even a correctly signed file is decoded field by field: a wrong shape is refused."""
    project("model.py", BREAKING)
    cold = run_json(capsys, project.root)
    cache = ProjectStore(project.root)
    (result,) = cache.results.folder.glob("result-*.json")
    key = json.loads(json.loads(result.read_text())["payload"])["key"]
    payload = json.dumps({"format": 1, "key": key, "result": {"files_scanned": "1", "diagnostics": []}})
    result.write_text(json.dumps({"mac": cache.results._mac(payload.encode()), "payload": payload}))
    assert cache.load_result(key) is None
    assert run_json(capsys, project.root) == cold


def test_cache_secret_is_private_and_outside_the_project(project, capsys):
    project("model.py", BREAKING)
    run_json(capsys, project.root)
    secret = cache_home() / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert not any(p.name.startswith("result-") for p in project.root.rglob("*"))


def test_cache_home_inside_the_project_is_not_trusted(project, capsys, monkeypatch):
    """A project could plant the secret itself: no caching at all then."""
    project("model.py", BREAKING)
    monkeypatch.setenv("GBREAK_LINT_CACHE_DIR", str(project.root / ".cache"))
    run_json(capsys, project.root)
    assert not list((project.root / ".cache").rglob("result-*.json"))


def test_no_cache_and_cache_dir(project, capsys, tmp_path_factory):
    project("model.py", BREAKING)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    run_json(capsys, project.root, "--cache-dir", elsewhere)
    assert list(elsewhere.rglob("result-*.json"))
    before = set(cache_home().rglob("result-*.json"))
    project("other.py", BREAKING.replace("def f", "def g"))
    run_json(capsys, project.root, "--no-cache")
    assert set(cache_home().rglob("result-*.json")) == before
