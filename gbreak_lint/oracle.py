"""Ground truth from real Dynamo: run a program under torch and record what Dynamo did.

This is the one module of gbreak-lint that *executes* code, and only when asked to
(`python -m gbreak_lint.oracle PROGRAM.py` / `gbreak-lint label`).  The linter itself never
imports it.  It labels fixtures the way ../shared/corpus was labelled: every graph break that
Dynamo handled while tracing (hooked on `InstructionTranslatorBase.log_graph_break`, the
source of `TORCH_LOGS=graph_breaks`), every frame whose conversion was given up
(hooked on `ConvertFrame.__call__`), and hard errors from `fullgraph=True` /
`error_on_graph_break(True)` that escape the program.

The default backend is forced to "eager": graph breaks do not depend on the backend.
Each configuration runs in a fresh interpreter so Dynamo's caches start empty.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import runpy
import subprocess
import sys
import sysconfig
import tempfile
from collections import defaultdict
from pathlib import Path

GB_URL = re.compile(r"gb/gb(\d{4})\.html")
RESUME_PREFIX = "torch_dynamo_resume_in_"

# The wrapper below must look like convert_frame.py to Dynamo: ConvertFrameAssert walks up
# the stack past frames from that file to recognise torch.compiler.disable(recursive=False).
_CONVERT_WRAPPER_SRC = '''
def wrapped_call(self, frame, cache_entry, hooks, frame_state, skip=0):
    try:
        result = ORIGINAL(self, frame, cache_entry, hooks, frame_state, skip=skip + 1)
    except BaseException as e:
        RECORD(frame.f_code, None, e)
        raise
    RECORD(frame.f_code, result, None)
    return result
'''


class Recorder:
    """Collects raw observations inside the child interpreter."""

    def __init__(self, root: Path):
        self.root = root
        self.breaks: list[dict] = []
        self.frames: list[dict] = []
        self.hard_errors: list[dict] = []
        self._seen_errors: set[int] = set()
        self._pending: list = []
        self._last_assert: tuple = (None, None)  # (code, error) of the latest ConvertFrameAssert call

    # -- helpers -----------------------------------------------------------------------
    def installed(self, filename: str) -> str | None:
        """The absolute path of a file of an installed package gbreak-lint follows (script
        mode): outside the project, not torch's, not the standard library's."""
        try:
            p = Path(filename).resolve()
        except (OSError, ValueError):
            return None
        text = str(p)
        if self.rel(filename) is not None or not text.endswith(".py") or "<" in filename:
            return None
        stdlib = str(Path(sysconfig.get_paths()["stdlib"]).resolve()) + os.sep
        if text.startswith(stdlib) and "site-packages" not in text:
            return None
        parts = p.parts
        if any(part in INSTALLED_NOT_FOLLOWED for part in parts) or "gbreak-oracle" in text:
            return None
        return text

    def rel(self, filename: str) -> str | None:
        """Path relative to the project root, or None for library code (a frozen standard
        library module, `<frozen os>`, is library code too)."""
        if filename.startswith("<frozen "):
            return None
        try:
            p = Path(filename).resolve()
        except (OSError, ValueError):
            return None
        libdirs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        if any(str(p).startswith(str(Path(d).resolve()) + os.sep) for d in libdirs):
            return None
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def stack_entries(self, stack) -> list[list]:
        return [[fs.filename, fs.lineno, fs.name] for fs in stack or []]

    # -- hooks -------------------------------------------------------------------------
    def on_graph_break(self, tx, reason: str, exc) -> None:
        import torch

        root = tx
        while getattr(root, "parent", None) is not None:
            root = root.parent
        stack = getattr(exc, "real_stack", None)
        if stack is None:
            stack = torch._guards.TracingContext.extract_stack()
        codes = GB_URL.findall(reason or "") or GB_URL.findall(str(exc))
        self.breaks.append({
            "compile_id": str(torch._guards.CompileContext.current_compile_id()),
            "root": code_ref(root.f_code),
            "root_line": getattr(root, "lineno", None),
            "reason": (reason or "").splitlines()[0] if reason else "",
            "gb_type": getattr(exc, "gb_type", None),
            "gb_codes": ["GB" + c for c in codes],
            "in_loop": "graph break in loop" in (reason or ""),
            "stack": self.stack_entries(stack),
        })

    def on_frame(self, code, result, error) -> None:
        entry = {"code": code_ref(code), "skip_reason": getattr(result, "skip_reason", None)}
        if error is not None:
            entry["error"] = type(error).__name__
        elif self._last_assert[0] is code and self._last_assert[1] is not None:
            # ConvertFrame suppressed what its ConvertFrameAssert just raised: a skip, not a hard
            # error. (Only that error: a fullgraph=True compile of the same code that raised
            # earlier, before torch._dynamo.reset(), stays a hard error.)
            suppressed = self._last_assert[1]
            self._pending = [(c, e) for c, e in self._pending if e is not suppressed]
        self.frames.append(entry)

    def on_assert_frame(self, code, result, error) -> None:
        """Errors leaving ConvertFrameAssert are hard errors unless ConvertFrame suppresses them."""
        self._last_assert = (code, error)
        if error is not None and getattr(error, "real_stack", None) is not None:
            self._pending.append((code, error))

    def finish(self) -> None:
        for _, error in self._pending:  # fullgraph=True errors, even if the program caught them
            self.on_uncaught(error)
        self._pending = []

    def on_uncaught(self, exc) -> None:
        if id(exc) in self._seen_errors:
            return
        self._seen_errors.add(id(exc))
        stack = getattr(exc, "real_stack", None)
        codes = GB_URL.findall(str(exc))
        self.hard_errors.append({
            "type": type(exc).__name__,
            "gb_type": getattr(exc, "gb_type", None),
            "gb_codes": ["GB" + c for c in codes],
            "stack": self.stack_entries(stack),
        })


CO_GENERATOR_FLAGS = 0x20 | 0x200 | 0x100  # generator, async generator, coroutine
# Installed packages whose breaks are causes in the catalog, attributed to the user's line
# (as gbreak-lint's script mode does not follow them).
INSTALLED_NOT_FOLLOWED = frozenset({"torch", "torchvision", "torchaudio", "functorch", "triton",
                                    "numpy", "typing_extensions", "_pytest", "pytest", "gbreak_lint"})


def code_ref(code) -> dict:
    return {"file": code.co_filename, "function": code.co_name,
            "first_line": def_line(code.co_filename, code.co_firstlineno),
            "generator": bool(code.co_flags & CO_GENERATOR_FLAGS)}


def def_line(filename: str, first_line: int) -> int:
    """co_firstlineno is the first decorator's line; labels use the `def` line."""
    import linecache

    if not linecache.getline(filename, first_line).lstrip().startswith("@"):
        return first_line
    for line in range(first_line, first_line + 200):
        if linecache.getline(filename, line).lstrip().startswith(("def ", "async def ", "class ")):
            return line
    return first_line


def install_hooks(rec: Recorder) -> None:
    import torch
    import torch._dynamo.convert_frame as cf
    import torch._dynamo.symbolic_convert as sc

    original_log = sc.InstructionTranslatorBase.log_graph_break

    def log_graph_break(self, code_options, reason, exc):
        if not getattr(exc, "logged", False):
            try:
                rec.on_graph_break(self, reason, exc)
            except Exception as err:  # the oracle must never change the program's behaviour
                print(f"gbreak-lint oracle: hook failed: {err!r}", file=sys.stderr)
        return original_log(self, code_options, reason, exc)

    sc.InstructionTranslatorBase.log_graph_break = log_graph_break

    fake_name = os.path.join("<gbreak-oracle>", "torch", "_dynamo", "convert_frame.py")
    code = compile(_CONVERT_WRAPPER_SRC, fake_name, "exec")
    namespace = {"ORIGINAL": cf.ConvertFrame.__call__, "RECORD": rec.on_frame}
    exec(code, namespace)
    cf.ConvertFrame.__call__ = namespace["wrapped_call"]
    # fullgraph=True compiles through ConvertFrameAssert alone: record its hard errors
    namespace = {"ORIGINAL": cf.ConvertFrameAssert.__call__, "RECORD": rec.on_assert_frame}
    exec(code, namespace)
    cf.ConvertFrameAssert.__call__ = namespace["wrapped_call"]

    original_compile = torch.compile

    def compile_eager(model=None, **kwargs):
        kwargs.setdefault("backend", "eager")
        return original_compile(model, **kwargs)

    torch.compile = compile_eager


def run_child(program: Path, root: Path, nested: str | None, out: Path, args: list[str]) -> None:
    rec = Recorder(root)
    install_hooks(rec)
    out.write_text(json.dumps(observe(rec, program, nested, args)))


def observe(rec: Recorder, program: Path, nested: str | None, args: list[str]) -> dict:
    """Run the program in this interpreter (hooks installed, recording into `rec`) and return
    the raw observations. Shared by the per-program child and difftest's fork server."""
    import torch

    if nested is not None:
        torch._dynamo.config.nested_graph_breaks = nested == "on"
    sys.argv = [str(program), *args]
    sys.path.insert(0, str(program.parent))
    exit_ok = True
    try:
        runpy.run_path(str(program), run_name="__main__")
    except SystemExit as e:
        exit_ok = not e.code
    except BaseException as e:  # noqa: BLE001 - the program's own failure is data
        exit_ok = False
        rec.on_uncaught(e)
    rec.finish()
    return {
        "breaks": rec.breaks,
        "frames": rec.frames,
        "hard_errors": rec.hard_errors,
        "exit_ok": exit_ok,
        "effective_nested_graph_breaks": bool(torch._dynamo.config.nested_graph_breaks),
        "torch": torch.__version__.split("+")[0],
    }


# -- turning raw observations into labels -----------------------------------------------
def summarize(raw: dict, root: Path) -> dict:
    rec = Recorder(root)
    sites: dict[tuple, dict] = {}
    lib_sites: dict[tuple, dict] = {}
    installed: dict[tuple, dict] = {}
    skipped: dict[tuple, dict] = {}
    partial: dict[tuple, set] = defaultdict(set)
    for br in raw["breaks"]:
        _add_break(rec, br, sites, lib_sites, skipped, partial)
        _add_installed_break(rec, br, installed)
    for err in raw["hard_errors"]:
        _add_hard_error(rec, err, sites)
    for fr in raw["frames"]:
        if fr.get("skip_reason") == "an error was suppressed during compilation":
            generator = fr["code"].get("generator")
            _mark_skipped(rec, fr["code"], None, skipped,
                          category="generator_frame" if generator else "unresumable_graph_break")
    compiled = [
        {"file": f, "function": fn, "first_line": ln, "partial_then_eager_at": sorted(lines)}
        for (f, fn, ln), lines in sorted(partial.items())
    ]
    for s in list(sites.values()) + list(lib_sites.values()) + list(installed.values()):
        s["compiles_hit"] = len(s.pop("_compiles"))
    return {
        "effective_nested_graph_breaks": [raw["effective_nested_graph_breaks"]],
        "graph_breaks": sorted(sites.values(), key=lambda s: (s["file"], s["line"], s["gb_code"] or "")),
        "library_breaks": sorted(lib_sites.values(), key=lambda s: (s["user_file"], s["user_line"])),
        "installed_breaks": sorted(installed.values(), key=lambda s: (s["file"], s["line"])),
        "skipped_frames": sorted(skipped.values(), key=lambda s: (s["file"], s["first_line"])),
        "compiled_frames": compiled,
        "exit_ok": raw["exit_ok"],
    }


def _innermost_user(rec: Recorder, stack: list) -> tuple[int, str] | None:
    for i in range(len(stack) - 1, -1, -1):
        rel = rec.rel(stack[i][0])
        if rel is not None:
            return i, rel
    return None


def _add_break(rec, br, sites, lib_sites, skipped, partial) -> None:
    stack = br["stack"]
    if not stack:
        return
    gb_code = br["gb_codes"][0] if br["gb_codes"] else None
    outcome = _outcome(br)
    found = _innermost_user(rec, stack)
    if found is not None:
        site = _user_site(rec, br, stack, found, gb_code, sites, lib_sites)
        site["outcomes"][outcome] = site["outcomes"].get(outcome, 0) + 1
        site["_compiles"].add(br["compile_id"])
    _mark_frame(rec, br, outcome, gb_code, skipped, partial)


def _user_site(rec, br, stack, found, gb_code, sites, lib_sites) -> dict:
    idx, rel = found
    key = (rel, stack[idx][1], gb_code)
    if idx == len(stack) - 1:
        return sites.setdefault(key, {
            "file": rel, "line": stack[idx][1], "function": stack[idx][2], "gb_code": gb_code,
            "gb_type": br["gb_type"], "outcomes": {}, "_compiles": set(),
            "user_stack": [[rec.rel(f) or f, ln, fn] for f, ln, fn in stack if rec.rel(f)],
        })
    return lib_sites.setdefault(key, {
        "file": stack[-1][0], "line": stack[-1][1], "function": stack[-1][2],
        "gb_code": gb_code, "user_file": rel, "user_line": stack[idx][1],
        "outcomes": {}, "_compiles": set(),
    })


def _mark_frame(rec, br, outcome: str, gb_code, skipped, partial) -> None:
    """The compiled frame's fate: skipped, or partial up to a checkpoint (project frames, and
    frames of followed installed packages)."""
    root = br["root"]
    where = rec.rel(root["file"]) or rec.installed(root["file"])
    if where is None:
        return
    if outcome == "frame_skipped":
        category = "graph_break_in_loop" if br["in_loop"] else (
            "skip_frame_call" if gb_code == "GB4297" else "unresumable_graph_break")
        _mark_skipped(rec, root, br["root_line"], skipped, category=category)
    elif outcome == "partial_then_eager" and not root["function"].startswith(RESUME_PREFIX):
        partial[(where, root["function"], root["first_line"])].add(br["root_line"])


def _add_installed_break(rec, br, installed) -> None:
    """A break inside an installed package (script mode): keyed by the library's own line and
    counted for every compilation, including those of library frames with no user frame on
    the stack (the nested re-traces of the chain)."""
    stack = br["stack"]
    if not stack:
        return
    inner = next((i for i in range(len(stack) - 1, -1, -1)
                  if rec.installed(stack[i][0]) or rec.rel(stack[i][0])), None)
    if inner is None or rec.installed(stack[inner][0]) is None:
        return
    path = rec.installed(stack[inner][0])
    gb_code = br["gb_codes"][0] if br["gb_codes"] else None
    user = next(((rec.rel(f), ln) for f, ln, _ in stack if rec.rel(f)), (None, None))
    site = installed.setdefault((path, stack[inner][1], gb_code), {
        "file": path, "line": stack[inner][1], "function": stack[inner][2], "gb_code": gb_code,
        "user_file": user[0], "user_line": user[1], "outcomes": {}, "_compiles": set()})
    outcome = _outcome(br)
    site["outcomes"][outcome] = site["outcomes"].get(outcome, 0) + 1
    site["_compiles"].add(br["compile_id"])


def _outcome(br: dict) -> str:
    # Only the root's "Skipping the function" skips a frame.  A loop break raised in an
    # inlined frame (nested graph breaks) loses its skip when it reaches the caller
    # (InliningInstructionTranslator.inline_call_): the caller then breaks at its call and
    # resumes, and the log it writes merely quotes "graph break in loop".
    reason = br["reason"]
    if "Skipping the function" in reason:
        return "frame_skipped"
    if "Compiling up to the previous resumable state" in reason:
        return "partial_then_eager"
    return "resumed"


def _mark_skipped(rec, code: dict, line, skipped, category: str) -> None:
    rel = rec.rel(code["file"]) or rec.installed(code["file"])  # installed: an absolute path
    if rel is None:
        return
    is_resume = code["function"].startswith(RESUME_PREFIX)
    key = (rel, code["function"], code["first_line"])
    entry = skipped.setdefault(key, {
        "file": rel, "function": code["function"], "first_line": code["first_line"],
        "category": category,
        "due_to_graph_break": category not in ("skip_frame_call", "generator_frame"),
        "break_line": line, "is_resume": is_resume,
    })
    if line is not None and entry["break_line"] is None:
        entry["break_line"] = line


def _add_hard_error(rec, err, sites) -> None:
    found = _innermost_user(rec, err["stack"])
    if found is None or not err["gb_codes"]:
        return
    idx, rel = found
    line = err["stack"][idx][1]
    key = (rel, line, err["gb_codes"][0])
    site = sites.setdefault(key, {
        "file": rel, "line": line, "function": err["stack"][idx][2],
        "gb_code": err["gb_codes"][0], "gb_type": err["gb_type"], "outcomes": {},
        "_compiles": set(), "user_stack": [],
    })
    site["outcomes"]["hard_error"] = site["outcomes"].get("hard_error", 0) + 1
    site["_compiles"].add("hard-error")  # a compile that raised counts as one of its own


def label(program: Path, root: Path, configs: list[str | None], timeout: float,
          args: list[str] | None = None) -> dict:
    import torch  # noqa: F401 - fail early and clearly when torch is missing

    result: dict = {"case": program.relative_to(root).as_posix(), "oracle": "gbreak-lint",
              "python": ".".join(map(str, sys.version_info[:3])), "configs": {}}
    for nested in configs:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "raw.json"
            cmd = [sys.executable, "-m", "gbreak_lint.oracle", "--child", str(program),
                   "--root", str(root), "--raw", str(out)]
            if nested is not None:
                cmd += ["--nested", nested]
            cmd += ["--", *(args or [])]
            env = dict(os.environ, PYTHONPATH=_pythonpath())
            proc = subprocess.run(cmd, cwd=program.parent, env=env, timeout=timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
            if not out.exists():
                tail = proc.stderr.decode(errors="replace")[-2000:]
                raise RuntimeError(f"oracle child produced no result for {program} "
                                   f"(exit {proc.returncode}):\n{tail}")
            raw = json.loads(out.read_text())
        result["torch"] = raw["torch"]
        result.setdefault("stdout", proc.stdout.decode(errors="replace")[-100_000:])
        name = f"nested_graph_breaks={'True' if nested == 'on' else 'False'}"
        result["configs"][name] = summarize(raw, root)
    return result


def _pythonpath() -> str:
    here = str(Path(__file__).resolve().parent.parent)
    return os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gbreak_lint.oracle", description=__doc__)
    ap.add_argument("program", type=Path, help="a program, or with --all a folder of fixtures")
    ap.add_argument("--all", action="store_true",
                    help="label every fixture (a folder holding main.py) below PROGRAM into its label.json")
    ap.add_argument("--root", type=Path, help="project root (default: the program's folder)")
    ap.add_argument("-o", "--output", type=Path, help="write the label JSON here")
    ap.add_argument("--both", action="store_true", help="also run with nested_graph_breaks=True")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--raw", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--nested", choices=["on", "off"], help=argparse.SUPPRESS)
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:split])
    program_args = argv[split + 1:]  # arguments for the program itself, after --
    program = args.program.resolve()
    root = (args.root or program.parent).resolve()
    if args.child:
        run_child(program, root, args.nested, args.raw, program_args)
        return 0
    configs: list[str | None] = ["off", "on"] if args.both else [None]
    if args.all:
        for main_py in sorted(program.rglob("main.py")):
            if "fixes" in main_py.relative_to(program).parts:
                continue  # rewrite before/after pairs are proven by tests/test_fixes.py
            result = label(main_py, main_py.parent, configs, args.timeout)
            result.pop("stdout", None)  # labels keep what Dynamo did, not what the program printed
            (main_py.parent / "label.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
            print(f"labelled {main_py.parent}", file=sys.stderr)
        return 0
    result = label(program, root, configs, args.timeout, program_args)
    text = json.dumps(result, indent=1, sort_keys=True) + "\n"
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
