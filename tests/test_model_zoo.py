"""benchmarks/model_zoo.py without torch or network: program generation, stored labels and
their scoring, resumable labelling."""
from __future__ import annotations

import ast
import json
import sys
import threading
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

from model_zoo_lib import runner, scoring  # noqa: E402
from model_zoo_lib.render import params_hash, program_id, render  # noqa: E402
from model_zoo_lib.store import Store, compact, expand, site_relative  # noqa: E402

BERT = {"lib": "transformers", "name": "BertForMaskedLM",
        "build": {"kind": "transformers", "config_class": "BertConfig", "model_class": "BertForMaskedLM",
                  "config": {"vocab_size": 128, "hidden_size": 32, "num_hidden_layers": 2,
                             "text_config": {"model_type": "x", "depths": [1, 1]}}},
        "inputs": [["input_ids", "torch.randint(0, 100, (2, 16))"],
                   ["attention_mask", "torch.ones(2, 16, dtype=torch.long)"]],
        "call": [["input_ids", "input_ids"], ["attention_mask", "attention_mask"]],
        "train_inputs": [["labels", "input_ids.clone()"]], "train_call": [["labels", "labels"]],
        "loss": "out.loss"}
RESNET = {"lib": "timm", "name": "resnet18",
          "build": {"kind": "timm", "model_name": "resnet18", "kwargs": {"num_classes": 10}},
          "inputs": [["x", "torch.randn(2, 3, 64, 64)"]], "call": [[None, "x"]],
          "train_inputs": [["labels", "torch.randint(0, 10, (2,))"]],
          "loss": "torch.nn.functional.cross_entropy(out, labels)"}
UNET = {"lib": "diffusers", "name": "UNet2DModel",
        "build": {"kind": "diffusers", "model_class": "UNet2DModel", "kwargs": {"sample_size": 32,
                  "block_out_channels": [32, 64], "down_block_types": ["DownBlock2D", "AttnDownBlock2D"]}},
        "inputs": [["sample", "torch.randn(2, 3, 32, 32)"], ["timestep", "torch.tensor([1, 10])"]],
        "call": [["sample", "sample"], ["timestep", "timestep"]], "loss": "out.sample.float().pow(2).mean()"}


def _calls(tree: ast.AST) -> list[str]:
    return [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]


@pytest.mark.parametrize("params", [BERT, RESNET, UNET], ids=lambda p: p["name"])
def test_programs_are_valid_and_compile_what_they_should(params):
    ev = render(params, "eval", "1.0")
    tree = ast.parse(ev)
    assert "torch.compile" in _calls(tree)
    assert "model.eval" in _calls(tree) and "torch.no_grad" in _calls(tree)
    assert "compiled" in _calls(tree)
    tr = render(params, "train", "1.0")
    tree = ast.parse(tr)
    step = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert step.name == "train_step"
    assert [ast.unparse(d) for d in step.decorator_list] == ["torch.compile"]
    assert "loss.backward" in _calls(step) and "model" in _calls(step)
    assert "model.train" in _calls(tree)
    # every input is defined before use and passed to the step
    args = [a.arg for a in step.args.args]
    assert args == [v for v, _ in params["inputs"] + params.get("train_inputs", [])]
    eager = render(params, "train", eager=True)
    assert "torch.compile" not in eager
    ast.parse(eager)


def test_config_values_render_as_python():
    ns = {}
    text = render(BERT, "eval", "5.23.0")
    cfg = text.split("config = BertConfig(", 1)[1].split("\n)", 1)[0]
    exec("def BertConfig(**kw):\n    return kw\nout = BertConfig(" + cfg + "\n)", ns)
    assert ns["out"] == BERT["build"]["config"]
    assert program_id(BERT, "train") == "BertForMaskedLM.train"
    with pytest.raises(ValueError):
        render(dict(BERT, build=dict(BERT["build"], config={"not a name": 1})), "eval")


def _label(program_file: str, backward_line: int, site_file: str) -> dict:
    """An oracle label: the train step's backward() break plus a break inside a library."""
    return {"configs": {"nested_graph_breaks=False": {
        "exit_ok": True, "effective_nested_graph_breaks": [False],
        "graph_breaks": [{"file": program_file, "line": backward_line, "function": "train_step",
                          "gb_code": "GB0123", "gb_type": "Unsupported Tensor.backward() call",
                          "outcomes": {"resumed": 1}, "compiles_hit": 1, "user_stack": []}],
        "library_breaks": [],
        "installed_breaks": [{"file": site_file, "line": 3, "function": "helper", "gb_code": "GB0124",
                              "user_file": program_file, "user_line": backward_line - 1,
                              "outcomes": {"resumed": 2}, "compiles_hit": 2}],
        "skipped_frames": [], "compiled_frames": []}}}


def test_compact_labels_are_portable(tmp_path):
    site_a, site_b = tmp_path / "a" / "site-packages", tmp_path / "b" / "site-packages"
    (site_b / "fakelib").mkdir(parents=True)
    (site_b / "fakelib" / "mod.py").write_text("x = 1\n")
    lab = compact(_label("p.py", 20, str(site_a / "fakelib" / "mod.py")))
    assert lab["installed_breaks"][0]["file"] == "$site/fakelib/mod.py"
    assert site_relative("/x/lib/python3.11/site-packages/t/u.py") == "$site/t/u.py"
    back = expand(lab, [str(tmp_path / "nowhere"), str(site_b)])
    cfg = back["configs"]["nested_graph_breaks=False"]
    assert cfg["installed_breaks"][0]["file"] == str(site_b / "fakelib" / "mod.py")
    assert cfg["graph_breaks"][0]["line"] == 20


def _synthetic_store(tmp_path: Path, site: Path) -> tuple[Store, Path]:
    store = Store(tmp_path / "store" / "timm-1.0.31.json", "timm", "1.0.31")
    store.set_model("resnet18", {"params": RESNET})
    text = render(RESNET, "train", "1.0.31")
    lines = text.splitlines()
    backward = next(i for i, ln in enumerate(lines, 1) if ln.strip() == "loss.backward()")
    name = "resnet18_train.py"
    raw = _label(name, backward, str(site / "fakelib" / "mod.py"))
    store.set_program("resnet18.train", {"model": "resnet18", "mode": "train", "params_hash": params_hash(RESNET),
                                         "label": compact(raw)}, "2.13.0", "3.11")
    store.set_program("resnet18.eval", {"model": "resnet18", "mode": "eval", "params_hash": params_hash(RESNET),
                                        "failed": "timed out after 300 s or died"})
    return store, tmp_path / "store"


def test_score_only_from_a_stored_label_file(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "mod.py").write_text("def helper(t):\n    y = t\n    return y.item()\n")
    store, store_dir = _synthetic_store(tmp_path, site)
    reread = Store(store.path, "timm", "1.0.31")  # from the file, as --score-only does
    assert json.loads(store.path.read_text())["programs"]["resnet18.train"]["label"]["installed_breaks"]

    def fake_lint(self, path, text):  # the linter finds the backward() break, not the library's
        line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == "loss.backward()")
        return {"diagnostics": [{"kind": "graph-break", "path": path.name, "line": line, "end_line": line,
                                 "code": "GBL317", "gb_code": "GB0123", "times_traced": 1}]}

    monkeypatch.setattr(scoring.Linter, "lint", fake_lint)
    rep = scoring.score_all({"timm": reread}, sys.executable, tmp_path / "work", tmp_path / "report.json",
                            {"timm": "1.0.31"}, sites=[str(site)], quiet=True, lock=tmp_path / "no.lock")
    f = rep["figures"]["timm/train"]
    assert (f["programs"], f["site_tp"], f["site_fn"], f["site_fp"]) == (1, 1, 1, 0)
    assert f["site_recall"] == 0.5 and f["site_precision"] == 1.0
    # the model breaks in the library; the linter only saw the step's own backward()
    assert (f["model_fn"], f["model_tp"], f["observed_breaking"], f["predicted_breaking"]) == (1, 0, 1, 0)
    assert rep["sites_missed"][0]["where"] == "$site/fakelib/mod.py:3"
    assert rep["causes"]["GB0124"]["fn"] == 1 and rep["causes"]["GB0123"]["tp"] == 1
    assert rep["not_scored"]["timm/eval"]
    assert (tmp_path / "report.md").read_text().count("timm/train") == 1


def test_real_linter_scores_a_stored_program(tmp_path):
    """The same through `gbreak-lint check` itself (the program imports nothing it can find)."""
    site = tmp_path / "site-packages"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "mod.py").write_text("def helper(t):\n    y = t\n    return y.item()\n")
    store, _ = _synthetic_store(tmp_path, site)
    rep = scoring.score_all({"timm": store}, sys.executable, tmp_path / "work", tmp_path / "report.json",
                            {"timm": "1.0.31"}, sites=[str(site)], quiet=True, lock=tmp_path / "no.lock")
    f = rep["figures"]["timm/train"]
    assert f["site_tp"] >= 1, rep  # loss.backward() inside the compiled train_step: GB0123
    assert rep["causes"]["GB0123"]["tp"] == 1


class FakeServer:
    def __init__(self, calls):
        self.calls = calls

    def ask(self, req, timeout):
        self.calls.append((req["op"], req.get("candidate", {}).get("name") or req.get("program")))
        if req["op"] == "candidates":
            return {"candidates": [{"lib": "timm", "name": "resnet18", "module": "resnet", "spare": False},
                                   {"lib": "timm", "name": "resnet34", "module": "resnet", "spare": True},
                                   {"lib": "timm", "name": "vgg11", "module": "vgg", "spare": False}]}
        if req["op"] == "probe":
            if req["candidate"]["name"] == "vgg11":
                return {"error": "RuntimeError: boom"}
            return {"params": dict(RESNET, name=req["candidate"]["name"],
                                   build=dict(RESNET["build"], model_name=req["candidate"]["name"]))}
        return _label(Path(req["program"]).name, 5, "/nowhere/site-packages/fakelib/mod.py")

    def close(self):
        pass


def test_labelling_resumes_and_skips_what_is_stored(tmp_path):
    store = Store(tmp_path / "timm.json", "timm", "1.0.31")
    calls = []
    lab = runner.Labeller("python", tmp_path / "work", {"timm": store}, {"timm": "1.0.31"},
                          lock=tmp_path / "no.lock", server_factory=lambda i: FakeServer(calls))
    stats = lab.run(["timm"], None, None)
    assert stats["labelled"] == 2 and stats["probe_failed"] == 1
    assert ("probe", "resnet34") not in calls  # the spare is not needed: resnet18 worked
    assert set(store.data["programs"]) == {"resnet18.eval", "resnet18.train"}
    assert store.data["models"]["vgg11"]["failed"].startswith("RuntimeError")
    assert (tmp_path / "work/programs/timm/resnet18_train/resnet18_train.py").exists()
    # a second run, from the file: nothing probed or labelled again
    calls.clear()
    store2 = Store(tmp_path / "timm.json", "timm", "1.0.31")
    lab2 = runner.Labeller("python", tmp_path / "work", {"timm": store2}, {"timm": "1.0.31"},
                           lock=tmp_path / "no.lock", server_factory=lambda i: FakeServer(calls))
    stats = lab2.run(["timm"], None, None)
    assert [c for c in calls if c[0] != "candidates"] == []
    assert stats["skipped"] == 2 and stats["labelled"] == 0
    # changed parameters make the program due again
    store2.data["models"]["resnet18"]["params"]["inputs"] = [["x", "torch.randn(2, 3, 32, 32)"]]
    calls.clear()
    runner.Labeller("python", tmp_path / "work", {"timm": store2}, {"timm": "1.0.31"}, lock=tmp_path / "no.lock",
                    server_factory=lambda i: FakeServer(calls)).run(["timm"], None, None)
    assert sum(1 for c in calls if c[0] == "label") == 2


def test_labelling_waits_for_the_benchmark_lock(tmp_path):
    lock = tmp_path / "bench.lock"
    lock.write_text("")
    threading.Timer(0.3, lock.unlink).start()
    t0 = time.time()
    runner.wait_for_lock(lock, poll=0.05)
    assert time.time() - t0 >= 0.25 and not lock.exists()
