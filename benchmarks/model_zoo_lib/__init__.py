"""Model zoo for gbreak-lint (issue #18): real library models, labelled by real torch, scored
against the linter's script mode. See benchmarks/model_zoo.py."""
