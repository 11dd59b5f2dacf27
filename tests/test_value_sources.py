"""Where the model's known values come from and when it refuses them: module tables
(model.global_values) and attributes only a property setter assigns (model.setter_fields)."""
import libcst as cst
import pytest

from gbreak_lint.model.global_values import _changes_dict
from gbreak_lint.model.setter_fields import _may_set_by_name, _possible_strings

READS = "T = {'a': 1}\nx = k in T\ny = '|'.join(T)\nz = T[k]\nv = T.get('a')\nfor k in T:\n    pass\nn = len(T)\n"


@pytest.mark.parametrize("change", ["T['b'] = 2", "del T['a']", "T.update(x)", "T |= {'b': 2}", "register(T, 'b', f)",
                                    "register(x, T)", "other = T", "x = T, 2", "T.setdefault('b', 1)",
                                    "T['a'] += 1"])
def test_a_table_is_known_only_while_every_use_reads_it(change):
    assert not _changes_dict(READS, "T")
    assert _changes_dict(READS + change + "\n", "T")


def _method(src: str) -> cst.FunctionDef:
    node = cst.parse_module(src).body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


def test_names_a_setattr_may_spell():
    fn = _method("def f(self, v):\n    for plan in ('tp_plan', 'ep_plan'):\n"
                 "        setattr(self, f'_{plan}', v)\n")
    assert _possible_strings(fn, cst.parse_expression("f'_{plan}'")) == {"_tp_plan", "_ep_plan"}
    assert not _may_set_by_name(fn, "_loss_function") and _may_set_by_name(fn, "_ep_plan")


def test_computed_setattr_may_set_anything_unless_guarded_by_hasattr():
    copied = _method("def __init__(self, **kw):\n    for k, v in kw.items():\n        setattr(self, k, v)\n")
    guarded = _method("def set(self, name, v):\n    if hasattr(self, name):\n        setattr(self, name, v)\n")
    through_dict = _method("def set(self, kw):\n    self.__dict__.update(kw)\n")
    assert _may_set_by_name(copied, "_x") and _may_set_by_name(through_dict, "_x")
    assert not _may_set_by_name(guarded, "_x")
