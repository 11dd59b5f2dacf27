"""The YAML loader for the tool's own data files (rule catalog, knowledge file)."""
from __future__ import annotations

import yaml

# libyaml's parser when PyYAML was built with it: the catalog and the knowledge file are read
# on every run, and the pure-Python parser was a tenth of a pre-commit run.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
