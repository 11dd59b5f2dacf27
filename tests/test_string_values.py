"""Strings the model computes from constants (model.string_values) and the bounds on them."""
import libcst as cst

from gbreak_lint.model.string_values import ListValue, regex_call, safe_pattern, string_method
from gbreak_lint.model.values import Const, Keywords, ValueEvaluator

TABLE = Const(Keywords(("ForCausalLM", "ForMaskedLM")))


def _value(src: str, names: dict):
    def qualify(expr):
        return "re.findall" if isinstance(expr, cst.Attribute) and expr.attr.value == "findall" else None

    ev = ValueEvaluator(names.get, lambda e: None, lambda e: False, qualify, lambda o, n: None,
                        lambda c: None, set())
    found = ev.value(cst.parse_expression(src))
    return None if found is None else found.value


def test_class_name_matched_against_a_table():
    groups = "re.findall(f\"({'|'.join(T)})\", n)"
    assert _value(f"{groups}", {"T": TABLE, "n": Const("TinyForMaskedLM")}) == ("ForMaskedLM",)
    assert _value(f"len({groups}) > 0", {"T": TABLE, "n": Const("TinyLMHeadModel")}) is False
    assert _value("n in T", {"T": TABLE, "n": Const("ForCausalLM")}) is True


def test_string_methods_and_fstrings():
    names = {"n": Const("BertModel")}
    assert _value("n.lower().startswith('bert')", names) is True
    assert _value("f'{n!r}-{2}'", names) == "'BertModel'-2"
    assert _value("f'{n:>20}'", names) is None  # a format spec: not computed
    assert isinstance(_value("n.split('M')", names), ListValue)
    assert _value("n.format(1)", names) is None  # not one of the pure methods computed


def test_only_patterns_without_repetition_are_matched():
    assert safe_pattern("(ForCausalLM|ForMaskedLM)") and safe_pattern(r"a\*b") and safe_pattern("(?:x|y)")
    for pattern in ("(a+)+$", "a*", "a?", "a{2,}", r"(a)\1", "(?P<x>a)(?P=x)", "(a|a)" * 40 + "c",
                    "(" * 2000 + ")" * 2000, "a.b", "[ab]"):
        assert not safe_pattern(pattern)  # (a sequence of alternations backtracks exponentially)
    assert regex_call("re.findall", ["(a+)+$", "a" * 40 + "!"]) is None
    assert regex_call("re.search", ["a", "a"]) is None


def test_sizes_are_bounded():
    assert string_method("-", "join", [("x",) * 10_000]) is None
    assert _value("'ab' * 1000000000", {}) is None
    assert _value("'ab' * 3", {}) == "ababab"
