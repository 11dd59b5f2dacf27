"""The Dynamo model on small programs: each behaviour here was measured under torch 2.13
(see fixtures/ for the labelled versions); these tests pin the model's reading of it."""
import textwrap

import pytest

from gbreak_lint.model.trace import CHECKPOINT_MIN_OPS

from conftest import run_json


def lint(project, capsys, source: str) -> list[dict]:
    project("main.py", textwrap.dedent(source))
    return run_json(capsys, project.root)["diagnostics"]


def kinds(diags, code=None):
    return sorted((d["code"], d["kind"], d["line"]) for d in diags if code is None or d["code"] == code)


@pytest.mark.parametrize("ops,kind", [(CHECKPOINT_MIN_OPS - 1, "frame-skipped"), (CHECKPOINT_MIN_OPS, "frame-partial")])
def test_with_block_checkpoint_boundary_is_the_models_constant(project, capsys, ops, kind):
    # the measured boundary (2 ops, pinned for `try` just below) holds for `with` as well
    before = "".join(f"    x = x + {i}\n" for i in range(ops))
    diags = lint(project, capsys, "import torch\n\nclass Ctx:\n    def __enter__(self): return self\n"
                 "    def __exit__(self, *a): return False\n\n@torch.compile\ndef f(x):\n" + before
                 + "    with Ctx():\n        torch._dynamo.graph_break()\n    return x\n")
    assert [d["kind"] for d in diags if d["code"] == "GBL103"] == [kind]


@pytest.mark.parametrize("ops,kind", [(0, "frame-skipped"), (1, "frame-skipped"), (2, "frame-partial"),
                                      (3, "frame-partial")])
def test_try_block_partial_or_skipped_by_op_count(project, capsys, ops, kind):
    before = "".join(f"    x = x + {i}\n" for i in range(ops))
    diags = lint(project, capsys, "import torch\n\n@torch.compile\ndef f(x):\n" + before
                 + "    try:\n        torch._dynamo.graph_break()\n    except ValueError:\n"
                   "        pass\n    return x\n")
    assert [d["kind"] for d in diags if d["code"] == "GBL102"] == [kind]


def test_ops_inside_an_inlined_callee_count_for_the_checkpoint(project, capsys):
    diags = lint(project, capsys, """
        import torch

        class Ctx:
            def __enter__(self): return self
            def __exit__(self, *a): return False

        def two(x):
            return (x + 1) * 2

        @torch.compile
        def f(x):
            x = two(x)
            with Ctx():
                torch._dynamo.graph_break()
            return x
    """)
    assert [d["kind"] for d in diags if d["code"] == "GBL103"] == ["frame-partial"]


def test_a_comparison_on_a_reduction_is_two_ops(project, capsys):
    diags = lint(project, capsys, """
        import contextlib
        import torch

        @contextlib.contextmanager
        def region():
            yield

        @torch.compile
        def f(x):
            y = x.sum() > 0
            with region():
                torch._dynamo.graph_break()
            return x
    """)
    assert [d["kind"] for d in diags if d["code"] == "GBL103"] == ["frame-partial"]


def test_resumable_context_manager_is_no_skip(project, capsys):
    diags = lint(project, capsys, """
        import torch

        @torch.compile
        def f(x):
            with torch.no_grad():
                torch._dynamo.graph_break()
            return x
    """)
    assert kinds(diags) == [("GBL301", "graph-break", 7)]


def test_break_in_callee_from_loop_skips_the_caller_and_compiles_the_callee(project, capsys):
    diags = lint(project, capsys, """
        import torch

        def callee(x):
            torch._dynamo.graph_break()
            return x + 1

        @torch.compile
        def caller(x):
            for _ in range(2):
                x = callee(x)
            return x
    """)
    loop = next(d for d in diags if d["code"] == "GBL101")
    assert loop["frame"]["function"] == "caller" and loop["line"] == 11
    site = next(d for d in diags if d["code"] == "GBL301")
    assert site["times_traced"] == 2


def test_return_after_the_break_ends_the_loop_check(project, capsys):
    diags = lint(project, capsys, """
        import torch

        @torch.compile
        def f(x):
            for i in range(3):
                torch._dynamo.graph_break()
                if i == 1:
                    return x
            return x
    """)
    assert "GBL101" not in {d["code"] for d in diags}


def test_nested_depth_gives_times_traced_and_config_switch(project, capsys):
    source = """
        import torch

        def h2(x):
            torch._dynamo.graph_break()
            return x

        def h1(x):
            return h2(x) + 1

        @torch.compile
        def f(x):
            return h1(x.sin())
    """
    diags = lint(project, capsys, source)
    assert next(d for d in diags if d["code"] == "GBL301")["times_traced"] == 3
    assert next(d for d in diags if d["code"] == "GBL201")["kind"] == "advice"
    diags = lint(project, capsys, source.replace("import torch\n", "import torch\n"
                 "        torch._dynamo.config.nested_graph_breaks = True\n", 1))
    assert next(d for d in diags if d["code"] == "GBL301")["times_traced"] == 1
    assert "GBL201" not in {d["code"] for d in diags}


def test_only_the_first_break_of_a_skipped_frame_is_reported(project, capsys):
    diags = lint(project, capsys, """
        import torch

        @torch.compile
        def f(x):
            for i in range(2):
                torch._dynamo.graph_break()
                print("never traced: the frame already runs eagerly")
            return x
    """)
    assert [d["code"] for d in diags if d["kind"] == "graph-break"] == ["GBL301"]


def test_listcomp_is_its_own_frame_on_python_311(project, capsys):
    diags = lint(project, capsys, """
        import torch

        @torch.compile
        def f(x):
            ys = [print(i) or x * i for i in range(3)]
            return ys[0]
    """)
    loop = next(d for d in diags if d["code"] == "GBL101")
    assert (loop["frame"]["function"], loop["frame"]["line"]) == ("<listcomp>", 6)
    assert next(d for d in diags if d["code"] == "GBL303")["times_traced"] == 2


def test_data_dependent_branches_but_not_on_shapes(project, capsys):
    diags = lint(project, capsys, """
        import torch

        @torch.compile
        def f(x, flag: bool = True, n=3):
            if x.shape[0] > 2 and x.ndim == 1 and isinstance(x, torch.Tensor):
                x = x * 2
            if flag and n > 1:
                x = x + 1
            for v in x:
                x = x + v
            assert (x > 0).all()
            if x.max() > 0:
                x = x - 1
            return x
    """)
    assert kinds(diags) == [("GBL310", "graph-break", 13)]


def test_scalar_capture_and_dynamic_shape_configs(project, capsys):
    source = """
        import torch

        @torch.compile
        def f(x):
            s = x.sum().item()
            idx = torch.nonzero(x)
            return x + s, idx
    """
    assert {d["code"] for d in lint(project, capsys, source)} == {"GBL307", "GBL311"}
    switched = source.replace("import torch\n", "import torch\n        "
                              "torch._dynamo.config.capture_scalar_outputs = True\n        "
                              "torch._dynamo.config.capture_dynamic_output_shape_ops = True\n", 1)
    assert lint(project, capsys, switched) == []


def test_disabled_callee_is_one_break_and_not_followed(project, capsys):
    diags = lint(project, capsys, """
        import torch

        def noisy(x):
            print(x)
            return x

        @torch.compiler.disable
        def stats(x):
            return noisy(x)

        @torch.compile
        def f(x):
            return stats(x) + 1
    """)
    assert kinds(diags) == [("GBL312", "graph-break", 14)]


def test_error_on_graph_break_region(project, capsys):
    diags = lint(project, capsys, """
        import torch

        def helper(x):
            print("x")
            return x

        @torch.compile
        def f(x):
            with torch._dynamo.error_on_graph_break(True):
                x = helper(x)
                with torch._dynamo.error_on_graph_break(False):
                    x = helper(x * 2)
            return x
    """)
    assert kinds(diags, "GBL501") == [("GBL501", "compile-error", 5)]


def test_unresolvable_calls_are_not_guessed(project, capsys):
    diags = lint(project, capsys, """
        import torch
        from thirdparty import mystery

        def local_print(x):
            print(x)

        @torch.compile
        def f(x, fn):
            x = mystery(x)
            x = fn(x)
            return getattr(x, "relu")()
    """)
    assert diags == []


def test_anomaly_guards_on_data_are_assumed_not_taken(project, capsys):
    diags = lint(project, capsys, """
        import torch

        @torch.compile
        def f(x):
            loss = x.sum()
            if torch.isnan(loss):
                print("nan!")
            value = loss.item()
            if value > 1e6:
                raise RuntimeError("diverged")
            if x.max() > 0:
                print("positive")
            else:
                x = x * 2
            return x
    """)
    lines = sorted((d["code"], d["line"]) for d in diags if d["kind"] == "graph-break")
    # both guards break on their test; only the if/else body (no guard) is traced
    assert lines == [("GBL303", 13), ("GBL307", 9), ("GBL310", 7), ("GBL310", 12)]


def test_configuration_flag_guards_are_assumed_off_but_training_is_not(project, capsys):
    diags = lint(project, capsys, """
        import torch
        import torch.nn as nn

        class M(nn.Module):
            def __init__(self, verbose=False):
                super().__init__()
                self.verbose = verbose
                self.lin = nn.Linear(2, 2)

            def forward(self, x):
                if self.verbose:
                    print("verbose")
                if self.training:
                    print("training")
                return self.lin(x)

        m = M()
        m.compile()
    """)
    assert [(d["code"], d["line"]) for d in diags if d["kind"] == "graph-break"] == [("GBL303", 15)]


def test_a_knowledge_file_naming_a_key_twice_is_refused():
    """YAML keeps the last of two equal keys silently; the knowledge loader refuses them (a
    list of tensor-only methods once went unread that way)."""
    import yaml

    from gbreak_lint.knowledge import _UniqueKeyLoader

    with pytest.raises(yaml.YAMLError, match="appears twice"):
        yaml.load("a: [1]\nb: 2\na: [3]\n", Loader=_UniqueKeyLoader)
    assert yaml.load("a: {x: 1}\nb: {x: 2}\n", Loader=_UniqueKeyLoader) == {"a": {"x": 1}, "b": {"x": 2}}
