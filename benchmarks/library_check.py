"""A model library scanned with named entry points, against what torch 2.13 reports.

    python benchmarks/library_check.py SOURCE_DIR [--python PYTHON] [--models bert,gpt2,...]

SOURCE_DIR holds the library's package, e.g. an unzipped transformers wheel
(`pip download --no-deps transformers==5.23.0 && unzip transformers-5.23.0-*.whl -d SOURCE_DIR`).
PYTHON must be able to import that library's dependencies and torch (for transformers: a venv
with `--system-site-packages` and `pip install transformers==5.23.0`); the library itself is
imported from a copy of SOURCE_DIR, so Dynamo's file names and the linter's agree.

For each model: a small program builds it from a tiny config and calls `torch.compile(model)`
twice; `python -m gbreak_lint.oracle` runs it (backend forced to "eager") and records Dynamo's
graph breaks, skipped and partial frames. One `gbreak-lint check` of the library with every
model's `forward` as `--entry` (the programs themselves are excluded from the scan) predicts
the same; findings are kept when their entry is one of those forwards, and scored like
benchmarks/accuracy.py (break sites, frames, times traced, GB codes).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from gbreak_lint.verify import Comparison, Observed, compare, observed  # noqa: E402

TOKENS = "ids = torch.randint(0, 100, (2, 8))\ncall = dict(input_ids=ids)\n"
MODELS = {
    "bert": ("BertConfig", "BertModel", "transformers.models.bert.modeling_bert",
             "hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, "
             "vocab_size=100, max_position_embeddings=64", TOKENS),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", "transformers.models.gpt2.modeling_gpt2",
             "n_embd=32, n_layer=2, n_head=2, vocab_size=100, n_positions=64", TOKENS),
    "llama": ("LlamaConfig", "LlamaForCausalLM", "transformers.models.llama.modeling_llama",
              "hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, "
              "intermediate_size=64, vocab_size=100, max_position_embeddings=64", TOKENS),
    "t5": ("T5Config", "T5Model", "transformers.models.t5.modeling_t5",
           "d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, vocab_size=100",
           TOKENS + "call['decoder_input_ids'] = ids\n"),
    "longformer": ("LongformerConfig", "LongformerModel", "transformers.models.longformer.modeling_longformer",
                   "hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, "
                   "vocab_size=100, attention_window=4, max_position_embeddings=80", TOKENS),
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", "transformers.models.mixtral.modeling_mixtral",
                "hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, "
                "intermediate_size=64, vocab_size=100, max_position_embeddings=64, num_local_experts=4, "
                "num_experts_per_tok=2", TOKENS),
    "vit": ("ViTConfig", "ViTForImageClassification", "transformers.models.vit.modeling_vit",
            "hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, "
            "image_size=32, patch_size=8, num_labels=3",
            "call = dict(pixel_values=torch.randn(2, 3, 32, 32))\n"),
}
PROGRAM = """import torch
from transformers import {config}, {model}

torch.manual_seed(0)
model = {model}({config}({kwargs})).eval()
compiled = torch.compile(model)
{inputs}with torch.no_grad():
    for _ in range(2):
        compiled(**call)
"""


def run_oracle(python: str, program: Path, work: Path) -> dict:
    out = program.with_suffix(".label.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(work), str(REPO)]), TOKENIZERS_PARALLELISM="false",
               HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    done = subprocess.run([python, "-m", "gbreak_lint.oracle", str(program), "--root", str(work), "-o", str(out)],
                          cwd=work, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"oracle failed on {program.name}:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}")
    return json.loads(out.read_text())


def scan(work: Path, package: str, entries: list[str]) -> list[dict]:
    (work / "pyproject.toml").write_text('[tool.gbreak-lint]\nextend-exclude = ["_programs"]\n')
    cmd = [sys.executable, "-m", "gbreak_lint", "check", str(work / package), "--root", str(work),
           "--format", "json", "--exit-zero", "--no-cache"]
    for spec in entries:
        cmd += ["--entry", spec]
    done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    if done.returncode != 0:
        raise SystemExit(f"gbreak-lint failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)["diagnostics"]


def merged(labels: list[dict], work: Path) -> Observed:
    sites, frames, codes = {}, {}, {}
    for label in labels:
        obs = observed(label, work)
        for key, value in obs.sites.items():
            if key not in sites or value["compiles_hit"] > sites[key]["compiles_hit"]:
                sites[key] = value
        frames.update(obs.frames)
        for key, per_code in obs.site_codes.items():
            mine = codes.setdefault(key, {})
            for code, hits in per_code.items():
                mine[code] = max(hits, mine.get(code, 0))
    return Observed(sites, frames, codes)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path)
    ap.add_argument("--package", default="transformers")
    ap.add_argument("--python", default=sys.executable, help="interpreter that can import the library")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--keep", action="store_true", help="keep the work folder and print its path")
    args = ap.parse_args(argv)
    chosen = [m.strip() for m in args.models.split(",") if m.strip()]
    work = Path(tempfile.mkdtemp(prefix="gbl-library-"))
    try:
        shutil.copytree(args.source / args.package, work / args.package,
                        ignore=shutil.ignore_patterns("__pycache__"))
        (work / "_programs").mkdir()
        labels, entries = [], []
        for name in chosen:
            config, model, module, kwargs, inputs = MODELS[name]
            program = work / "_programs" / f"{name}.py"
            program.write_text(PROGRAM.format(config=config, model=model, kwargs=kwargs, inputs=inputs))
            labels.append(run_oracle(args.python, program, work))
            entries.append(f"{module}:{model}.forward")
            print(f"{name}: torch ran {model} ({len(labels[-1]['configs'])} config(s) labelled)", flush=True)
        diagnostics = scan(work, args.package, entries)
        ours = {spec.replace(":", ".") for spec in entries}
        kept = [d for d in diagnostics if d.get("entry") in ours]
        cmp = compare(merged(labels, work), kept, work, Comparison())
        for row in cmp.rows:
            print(f"  {row['what']:<5} {row['where']:<70} predicted {row.get('code') or row.get('predicted') or '-'}"
                  f" observed {row.get('observed') or '-'}  {'MISMATCH' if row.get('miss') else 'ok'}")
        print(json.dumps({"models": chosen, "findings_scored": len(kept), "findings_other_entries":
                          len(diagnostics) - len(kept), **cmp.figures()}, indent=1))
    finally:
        if args.keep:
            print(f"work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
