"""Helpers of benchmarks/difftest.py: a generator of small torch.compile programs, a batch
oracle, scoring through gbreak_lint.verify, a shrinker and the report."""
