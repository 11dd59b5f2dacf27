"""Model zoo: where torch.compile really breaks in transformers / timm / diffusers models, and
how gbreak-lint's script mode predicts it (issue #18).

Versions (pinned): transformers 5.23.0, timm 1.0.31, diffusers 0.42.1, torchvision 0.28.0,
over torch 2.13.0 (CPU). Nothing is downloaded but packages: every model is built from a tiny
config with random weights (2 layers, hidden 32-64, vocab 128, images 32-64 px).

Environment (once; never the user's): a venv that sees the system torch, the libraries
installed with a constraint that keeps torch at 2.13.0, and torchvision's __init__ patched so
`_meta_registrations` is imported only when `torchvision.extension._has_ops()` (the only
torchvision 0.28.0 wheel is built against CUDA torch; timm imports torchvision):

    python benchmarks/model_zoo.py --setup-env /tmp/zooenv
      # = python -m venv --system-site-packages /tmp/zooenv
      #   /tmp/zooenv/bin/pip install -c <(echo torch==2.13.0) transformers==5.23.0 timm==1.0.31 \
      #       diffusers==0.42.1 torchvision==0.28.0      + the torchvision patch

Labelling (runs torch; resumable, parallel with --jobs, nice 19, one thread per job, waits
while /tmp/gbreak-bench.lock exists before each probe and each program):

    nohup python benchmarks/model_zoo.py --label-only --python /tmp/zooenv/bin/python \
        --work /tmp/zoo-work --jobs 1 > /tmp/zoo-label.log 2>&1 &

  1. enumerate candidates from the libraries' registries (transformers: MODEL_MAPPING_NAMES
     and one head class per model type from the MODEL_FOR_*_MAPPING_NAMES, config classes
     from CONFIG_MAPPING; timm: list_models() per model module, the smallest names first;
     diffusers: a fixed list of tiny configs, model_zoo_lib/probe.py);
  2. probe each model once in a forked child: shrink the config fields named like sizes, try
     input variants, keep the first parameters that run eagerly in eval (forward under
     no_grad) and train (forward, loss, loss.backward()); a model that fails is stored as
     failed with its reason;
  3. write one program per (model, mode) (model_zoo_lib/render.py: eval =
     `torch.compile(model)` called once under no_grad; train = a `@torch.compile` train_step
     with `loss.backward()`) and label it with gbreak-lint's oracle (hooks of
     gbreak_lint.oracle in a fork server like difftest's: torch and the libraries imported
     once, each program in a fresh fork, default backend "eager");
  4. store per library version in benchmarks/zoo/<lib>-<version>.json: each model's
     parameters and each program's compact label (library paths relative to site-packages).

Scoring (no torch run; runs `gbreak-lint check PROGRAM --python ZOO_PY --format json` per
program, cached by program text and linter source in WORK/lint/):

    python benchmarks/model_zoo.py --score-only --python /tmp/zooenv/bin/python --work /tmp/zoo-work

  model-level agreement (breaks vs compiles clean; a train program's own loss.backward()
  break, GB0123, is not counted as the model breaking), break sites and frames precision /
  recall (gbreak_lint.verify.observed / compare, which score breaks inside installed
  libraries at the library's line), a per-cause (GB code) table, the library sites missed
  or over-reported most, and the models worst first. Written to benchmarks/zoo/report.json
  and report.md; tables on stdout.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

VERSIONS = {"transformers": "5.23.0", "timm": "1.0.31", "diffusers": "0.42.1"}
TORCH = "2.13.0"
TORCHVISION = "0.28.0"
ZOO_DIR = BENCH / "zoo"
TV_OLD = "    _meta_registrations,\n"
TV_NEW = ("\nif extension._has_ops():  # gbreak-lint model zoo: CPU torch with a CUDA-built torchvision\n"
          "    from torchvision import _meta_registrations  # noqa: F401\n")


def store_path(lib: str) -> Path:
    return ZOO_DIR / f"{lib}-{VERSIONS[lib]}.json"


def setup_env(target: Path) -> int:
    py = target / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(target)], check=True)
    constraints = target / "zoo-constraints.txt"
    constraints.write_text(f"torch=={TORCH}\n")
    pkgs = [f"{k}=={v}" for k, v in VERSIONS.items()] + [f"torchvision=={TORCHVISION}"]
    subprocess.run([str(py), "-m", "pip", "install", "-c", str(constraints), *pkgs], check=True)
    init = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('torchvision').origin)"],
                          capture_output=True, text=True, check=True).stdout.strip()
    text = Path(init).read_text()
    if TV_OLD in text:
        text = text.replace(TV_OLD, "", 1).replace(")  # usort:skip\n", ")  # usort:skip\n" + TV_NEW, 1)
        Path(init).write_text(text)
    check = subprocess.run([str(py), "-c", "import torch, torchvision, timm, transformers, diffusers; "
                            "print(torch.__version__, transformers.__version__, timm.__version__, "
                            "diffusers.__version__)"], capture_output=True, text=True)
    print(check.stdout.strip() or check.stderr[-2000:])
    return check.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setup-env", type=Path, metavar="DIR", help="create the zoo venv in DIR and exit")
    ap.add_argument("--python", default="/tmp/zooenv/bin/python", help="the zoo environment's interpreter")
    ap.add_argument("--work", type=Path, default=Path("/tmp/zoo-work"), help="programs, logs, lint cache")
    ap.add_argument("--libs", default="diffusers,timm,transformers")
    ap.add_argument("--models", help="comma-separated model names (class names / timm names) only")
    ap.add_argument("--limit", type=int, help="at most N models (timm: model modules) per library")
    ap.add_argument("--modes", default="eval,train")
    ap.add_argument("--jobs", type=int, default=1, help="labelling servers (default 1)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per program under the oracle")
    ap.add_argument("--retry-failed", action="store_true", help="probe models stored as failed again")
    ap.add_argument("--label-only", action="store_true")
    ap.add_argument("--score-only", action="store_true", help="score stored labels: no torch run")
    ap.add_argument("--lint-jobs", type=int, default=1)
    ap.add_argument("--lint-timeout", type=float, default=300)
    ap.add_argument("--linter-src", type=Path, default=BENCH.parent,
                    help="the gbreak-lint checkout to score (a frozen copy keeps the lint cache valid)")
    ap.add_argument("--store-dir", type=Path, default=ZOO_DIR, help="where the label files live")
    ap.add_argument("--report", type=Path, help="report JSON (default STORE_DIR/report.json)")
    args = ap.parse_args(argv)
    if args.setup_env:
        return setup_env(args.setup_env)
    from model_zoo_lib.store import Store

    libs = [x.strip() for x in args.libs.split(",") if x.strip()]
    stores = {lib: Store(args.store_dir / f"{lib}-{VERSIONS[lib]}.json", lib, VERSIONS[lib]) for lib in libs}
    only = {m.strip() for m in args.models.split(",")} if args.models else None
    if not args.score_only:
        if not Path(args.python).exists():
            raise SystemExit(f"{args.python} not found: create the environment with --setup-env DIR")
        from model_zoo_lib.runner import Labeller, log

        modes = tuple(m.strip() for m in args.modes.split(","))
        lab = Labeller(args.python, args.work, stores, VERSIONS, args.jobs, args.timeout,
                       retry_failed=args.retry_failed)
        stats = lab.run(libs, args.limit, only, modes)
        log(f"labelling done: {stats}")
    if not args.label_only:
        from model_zoo_lib.scoring import score_all

        report = args.report or args.store_dir / "report.json"
        score_all(stores, args.python, args.work, report, VERSIONS, args.lint_jobs, args.lint_timeout,
                  linter_src=args.linter_src.resolve(), only=only)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
