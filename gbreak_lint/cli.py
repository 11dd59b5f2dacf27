"""Command line: argument parsing only; the work happens in api.py."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from . import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
LEVELS = {"info": 0, "warning": 1, "error": 2}


class UsageFailure(Exception):
    pass


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        out += [v.strip().upper() for v in value.split(",") if v.strip()]
    return tuple(out)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gbreak-lint")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Predict where torch.compile (Dynamo) will break the graph or skip a frame."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(check)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True)
@click.option("--select", multiple=True, help="Only report codes with these prefixes (comma-separated).")
@click.option("--ignore", multiple=True, help="Do not report codes with these prefixes.")
@click.option("--fail-on", type=click.Choice(list(LEVELS)), help="Lowest severity that fails the run.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Read [tool.gbreak-lint] from this pyproject.toml.")
@click.option("--root", type=click.Path(path_type=Path, file_okay=False),
              help="Project root for the index (default: found from the paths).")
@click.option("--torch-version", "torch_profile", help="Torch knowledge profile (default 2.13).")
@click.option("--entry", "entries", multiple=True,
              help="Analyse this function as compiled, and only the named ones: 'pkg.module:Class.forward' "
                   "(repeatable; parses only what they reach).")
@click.option("--assume-compiled", type=click.Choice(["none", "modules"]),
              help="'modules': treat the forward of every nn.Module subclass as compiled (libraries).")
@click.option("--baseline", "baseline_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Report only findings not recorded in this baseline file.")
@click.option("--write-baseline", type=click.Path(path_type=Path, dir_okay=False),
              help="Record the current findings in this file and exit 0.")
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where results are cached (default: the user cache folder, ~/.cache/gbreak-lint).")
@click.option("--python", "python", help="Interpreter whose installed packages imports resolve to "
              "(read as source, never imported; default: the one running gbreak-lint).")
@click.option("--no-follow-installed", is_flag=True, help="Do not follow calls into installed packages.")
@click.option("--show-library-conditions", is_flag=True,
              help="Also report findings an installed package reaches only behind an `if` on values "
                   "the source does not tell (each carries its condition).")
@click.option("--dynamo-config", "dynamo_config", multiple=True, metavar="FLAG=BOOL",
              help="Analyse as if torch._dynamo.config.FLAG were set before the program runs, e.g. "
                   "nested_graph_breaks=true (repeatable; the program's own assignments still apply).")
@click.option("-j", "--jobs", type=click.IntRange(min=1),
              help="Worker processes for a scan (default: one per CPU). Results do not depend on it.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
def check(paths, fmt, select, ignore, fail_on, exit_zero, config_file, root, torch_profile, entries,
          assume_compiled, baseline_file, write_baseline, apply_fixes, unsafe_fixes, show_diff, no_cache,
          cache_dir, python, no_follow_installed, show_library_conditions, dynamo_config, jobs, quiet):
    """Scan PATHS (default: .) for predicted graph breaks."""
    from .api import Selection, lint_paths
    from .config import load_config

    paths = list(paths) or [Path(".")]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageFailure(f"no such file or directory: {', '.join(missing)}")
    config = load_config(paths[0], config_file)
    for warning in config.warnings:
        click.echo(f"gbreak-lint: warning: {warning}", err=True)
    config = config.with_overrides(fail_on=fail_on, torch_profile=torch_profile,
                                   root=root.resolve() if root else None,
                                   entry_points=config.entry_points + tuple(entries) if entries else None,
                                   assume_compiled=assume_compiled,
                                   cache_dir=cache_dir.resolve() if cache_dir else None, python=python,
                                   follow_installed=False if no_follow_installed else None,
                                   show_library_conditions=True if show_library_conditions else None,
                                   dynamo_config=_dynamo_config(config, dynamo_config))
    selection = Selection(_codes(select) or config.select, _codes(ignore) or config.ignore)
    if show_diff or apply_fixes:
        raise SystemExit(_run_fixes(paths, config, selection, unsafe_fixes, show_diff, quiet))
    progress = _progress_bar() if sys.stderr.isatty() and not quiet else None
    result = lint_paths(paths, config, selection, use_cache=not no_cache, progress=progress, jobs=jobs)
    if write_baseline:
        from .baseline import write_baseline as write

        count = write(result, write_baseline)
        click.echo(f"gbreak-lint: wrote {count} finding(s) to baseline {write_baseline}", err=True)
        raise SystemExit(EXIT_OK)
    baseline_file = baseline_file or config.baseline
    if baseline_file:
        result = _apply_baseline(result, baseline_file, quiet)
    if fmt == "json":
        from .report.json_report import render

        click.echo(render(result, config.torch_profile), nl=False)
    elif fmt == "sarif":
        from .catalog import load_catalog
        from .report.sarif import render

        click.echo(render(result, load_catalog(config.extra_rules)), nl=False)
    elif fmt == "github":
        from .report.github import render

        click.echo(render(result), nl=False)
    else:
        from .report.text import render

        text = render(result)
        if quiet:
            text = "".join(text.splitlines(keepends=True)[:-1])
        click.echo(text, nl=False)
    threshold = LEVELS[config.fail_on]
    failing = any(LEVELS[d.severity] >= threshold for d in result.diagnostics)
    raise SystemExit(EXIT_FINDINGS if failing and not exit_zero else EXIT_OK)


PROGRESS_MIN_FILES = 300  # smaller scans finish before a bar helps


def _dynamo_config(config, given: tuple[str, ...]):
    """`--dynamo-config flag=value` options over the configuration file's table."""
    from .config import dynamo_settings

    if not given:
        return None
    pairs = []
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageFailure(f"--dynamo-config takes FLAG=BOOL, got '{item}'")
        pairs.append((name.strip(), value.strip()))
    return dynamo_settings([*config.dynamo_config, *pairs], "--dynamo-config")


def _progress_bar():
    def show(done: int, total: int) -> None:
        if total < PROGRESS_MIN_FILES or (done % 25 and done != total):
            return
        width = 30
        filled = width * done // total
        sys.stderr.write(f"\rgbreak-lint: parsing [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\r" + " " * (width + 40) + "\r")
        sys.stderr.flush()

    return show


def _run_fixes(paths, config, selection, unsafe: bool, diff_only: bool, quiet: bool) -> int:
    """--diff / --fix: exit 1 when files change (or would), like other pre-commit fixers."""
    from .api import analyse
    from .autofix import fix_paths, write_changes
    from .report.text import render

    report = fix_paths(paths, config, selection, unsafe)
    for error in report.errors:
        click.echo(f"gbreak-lint: {error.path}: {error.message}", err=True)
    changed = report.changed()
    if diff_only:
        click.echo(report.diff(), nl=False)
        if not quiet:
            click.echo(f"Would fix {len(report.applied)} finding(s) in {len(changed)} file(s).", err=True)
        return EXIT_FINDINGS if changed else EXIT_OK
    write_changes(report)
    result = analyse(paths, config, selection).result
    click.echo(render(result), nl=False)
    if not quiet:
        click.echo(f"Fixed {len(report.applied)} finding(s) in {len(changed)} file(s).", err=True)
    threshold = LEVELS[config.fail_on]
    failing = any(LEVELS[d.severity] >= threshold for d in result.diagnostics)
    return EXIT_FINDINGS if changed or failing else EXIT_OK


@cli.command("fix")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.pass_context
def fix_cmd(ctx, paths, unsafe_fixes, show_diff):
    """Apply fixes (same as `check --fix`)."""
    ctx.invoke(check, paths=paths, apply_fixes=True, unsafe_fixes=unsafe_fixes, show_diff=show_diff)


def _apply_baseline(result, path: Path, quiet: bool):
    from .baseline import apply_baseline

    outcome = apply_baseline(result, path)
    if outcome.removable and not quiet:
        click.echo(f"gbreak-lint: {len(outcome.removable)} finding(s) in {path} no longer occur; "
                   "refresh it with --write-baseline:", err=True)
        for entry in outcome.removable:
            click.echo(f"  {entry['path']}:{entry['line']}: {entry['code']} {entry['message']}", err=True)
    return outcome.result


@cli.command("explain")
@click.argument("target", default=".")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), help="Project root.")
def explain_cmd(target, fmt, root):
    """Show each compile entry point's call tree with predicted breaks: TARGET is PATH[:function]."""
    from .api import analyse
    from .config import load_config
    from .report import explain

    path_text, _, function = target.partition(":") if not Path(target).exists() else (target, "", "")
    path = Path(path_text)
    if not path.exists():
        raise UsageFailure(f"no such file or directory: {path}")
    config = load_config(path).with_overrides(root=root.resolve() if root else None)
    analysis = analyse([path], config)
    wanted = {str(p.resolve()) for p in ([path] if path.is_file() else [])}
    prediction = analysis.prediction
    trees = explain.build(prediction, function or None)
    if wanted:  # a file: the entry points it defines or compiles, or whose chains reach it
        trees = [t for t in trees if _touches(t, prediction, wanted)]
    if fmt == "json":
        click.echo(explain.render_json(trees), nl=False)
    else:
        click.echo(explain.render_text(trees, color=sys.stdout.isatty()), nl=False)


def _touches(tree: dict, prediction, files: set[str]) -> bool:
    entry = next(e for e in prediction.entries if e.function == tree["entry"])
    if str(Path(entry.path).resolve()) in files:
        return True
    return any(s.entry == tree["entry"] and any(str(Path(link.path).resolve()) in files for link in s.chain)
               for s in prediction.sites)


@cli.command("rules")
def rules_cmd():
    """List the rule catalog."""
    from .catalog import load_catalog

    for rule in load_catalog().rules:
        gb = ",".join(rule.gb_codes) or "-"
        click.echo(f"{rule.code}  {rule.name:<40} {rule.severity:<8} {rule.kind:<14} {gb}")


@cli.command("rule")
@click.argument("code")
def rule_cmd(code):
    """Print one rule's documentation."""
    from .catalog import load_catalog

    rule = load_catalog().get(code.upper())
    if rule is None:
        raise UsageFailure(f"unknown rule {code}")
    from .report.rule_doc import render

    click.echo(render(rule), nl=False)


@cli.command("verify", context_settings={"ignore_unknown_options": True})
@click.argument("script", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), help="Project root.")
@click.option("--timeout", type=float, default=600, show_default=True, help="Seconds for one run.")
def verify_cmd(script, args, fmt, root, timeout):
    """RUN SCRIPT under torch and compare predictions with what Dynamo did.

    This is the one command that executes code: SCRIPT runs (with ARGS after --) with
    torch.compile's default backend forced to "eager", while Dynamo's own graph-break logging
    and frame conversion are recorded.
    """
    import importlib.util
    import json

    if importlib.util.find_spec("torch") is None:
        raise UsageFailure("verify needs torch installed (pip install torch==2.13.0)")
    from .api import analyse
    from .config import load_config
    from .oracle import label
    from .report.json_report import diagnostic_dict
    from .verify import compare, observed, render_table

    script = script.resolve()
    config = load_config(script)
    config = config.with_overrides(root=root.resolve() if root else None)
    click.echo(f"gbreak-lint verify: running {script.name} under torch (this executes it)...", err=True)
    result = label(script, config.root, [None], timeout, list(args))
    report = analyse([config.root], config, program=script).result
    diags = [diagnostic_dict(d) for d in report.diagnostics]
    for d in diags:  # the JSON paths are relative to the cwd; compare wants them under root
        d["path"] = str(Path(d["path"]).resolve())
        if d["frame"]:
            d["frame"]["path"] = str(Path(d["frame"]["path"]).resolve())
    cmp = compare(observed(result, config.root), diags, config.root)
    if fmt == "json":
        click.echo(json.dumps({"script": str(script), "torch": result.get("torch"),
                               "figures": cmp.figures(), "counts": cmp.counts, "rows": cmp.rows}, indent=2))
    else:
        click.echo(render_table(cmp, script.name), nl=False)
    raise SystemExit(EXIT_OK if not cmp.misses() else EXIT_FINDINGS)


def main(argv: list[str] | None = None) -> int:
    from .catalog import CatalogError
    from .config import ConfigError
    from .baseline import BaselineError
    from .index.entries import EntrySpecError
    from .index.installed import InterpreterError
    from .knowledge import UnknownProfile

    try:
        cli.main(args=argv, prog_name="gbreak-lint", standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    except click.exceptions.Abort:
        return EXIT_ERROR
    except click.ClickException as exc:
        exc.show()
        return EXIT_ERROR
    except (UsageFailure, ConfigError, CatalogError, UnknownProfile, EntrySpecError, BaselineError,
            InterpreterError) as exc:
        click.echo(f"gbreak-lint: error: {exc}", err=True)
        return EXIT_ERROR
    except Exception as exc:  # never show a traceback to a user unless asked
        if os.environ.get("GBREAK_LINT_DEBUG"):
            raise
        click.echo(f"gbreak-lint: internal error: {type(exc).__name__}: {exc} "
                   "(set GBREAK_LINT_DEBUG=1 for the traceback)", err=True)
        return EXIT_ERROR
    return EXIT_OK


def run() -> None:
    """The console entry point: `main`, then a hard exit. A scan leaves millions of small objects
    behind; freeing them one by one at interpreter exit takes seconds and changes nothing."""
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
