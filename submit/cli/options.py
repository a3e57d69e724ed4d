"""Options shared by `submit` commands, defined once: where the stack's outputs come from
(accepted before and after the command name), the namespace, and durations.

Kept apart from the commands so that `submit --help` and the option plumbing import
nothing of the render path.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, TypeVar

import click

from submit.cli.output import FORMATS


F = TypeVar("F", bound=Callable[..., Any])

STACK_HELP = "Pulumi stack whose outputs describe the cluster."
OUTPUTS_HELP = ("Read the outputs from FILE (JSON of `pulumi stack output --json "
                "--show-secrets`, or `accelstack-preview STACK --outputs FILE`).")
PROJECT_DIR_HELP = "Pulumi project directory (where Pulumi.yaml is)."
NAMESPACE_HELP = "Namespace (default: the stack's workload namespace)."


def complete(name: str) -> Callable[..., Any]:
    """Shell completion, loaded only when the shell asks (``submit.cli.completion``)."""
    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> Any:
        from submit.cli import completion

        return getattr(completion, name)(ctx, param, incomplete)
    return complete


# The two ways to name a stack's outputs, as parameter names before and after the command.
_SOURCES = {"stack": ("stack", "stack_after"), "outputs": ("outputs_file", "outputs_after")}


def _typed(ctx: click.Context | None, name: str) -> bool:
    """Whether the parameter ``name`` of ``ctx`` was typed on the command line."""
    from click.core import ParameterSource

    return ctx is not None and ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE


def _one_source(ctx: click.Context, given: str) -> None:
    """--stack and --outputs typed together (before the command, after it, or one of each)
    name two sources of the outputs: refused, rather than one silently winning."""
    other = "outputs" if given == "stack" else "stack"
    if any(_typed(c, n) for c in (ctx, ctx.parent) for n in _SOURCES[other]):
        raise click.UsageError("--stack and --outputs both name the stack's outputs (a "
                               "deployed stack's, or a file's); give one of them", ctx=ctx)


def one_source(given: str) -> Callable[..., Any]:
    """The callback of a --stack (``given`` "stack") or --outputs ("outputs") option."""
    return _only(given)


def _only(given: str) -> Callable[..., Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and _typed(ctx, param.name or ""):
            _one_source(ctx, given)
        return value
    return callback


def stack_group_options(f: F) -> F:
    """--stack, --outputs, --project-dir and -n/--namespace of `submit workload`."""
    for option in reversed([
        click.option("--stack", envvar="ACCELSTACK_STACK", show_envvar=True, metavar="NAME",
                     shell_complete=complete("stacks"), help=STACK_HELP,
                     callback=_only("stack")),
        click.option("--outputs", "outputs_file", envvar="ACCELSTACK_OUTPUTS",
                     show_envvar=True, metavar="FILE", callback=_only("outputs"),
                     type=click.Path(dir_okay=False), help=OUTPUTS_HELP),
        click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
                     default=".", show_default=True, metavar="DIR",
                     type=click.Path(file_okay=False), help=PROJECT_DIR_HELP),
        click.option("-n", "--namespace", metavar="NAMESPACE", help=NAMESPACE_HELP),
    ]):
        f = option(f)
    return f


def _set(attr: str, clears: str | None = None) -> Callable[..., None]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is None:
            return
        if attr in ("stack", "outputs_file"):
            _one_source(ctx, "stack" if attr == "stack" else "outputs")
        ctx.meta[f"accelstack.{attr}"] = value  # for shell completion, which has no obj
        if ctx.obj is not None:
            setattr(ctx.obj, attr, value)
            if clears:  # the option given last, after the command, wins
                setattr(ctx.obj, clears, None)
    return callback


def stack_options(f: F) -> F:
    """The same options after the command name; they override those given before it."""
    for option in reversed([
        click.option("--stack", "stack_after", metavar="NAME", expose_value=False,
                     callback=_set("stack", clears="outputs_file"),
                     shell_complete=complete("stacks"),
                     help=STACK_HELP + " Same as `submit workload --stack`."),
        click.option("--outputs", "outputs_after", metavar="FILE", expose_value=False,
                     type=click.Path(dir_okay=False), callback=_set("outputs_file"),
                     help="Same as `submit workload --outputs`."),
        click.option("--project-dir", "project_dir_after", metavar="DIR", expose_value=False,
                     type=click.Path(file_okay=False), callback=_set("project_dir"),
                     help="Same as `submit workload --project-dir`."),
    ]):
        f = option(f)
    return f


def _namespace(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None and ctx.obj is not None:
        return getattr(ctx.obj, "namespace", None)
    return value


namespace_option = click.option(
    "-n", "--namespace", metavar="NAMESPACE", callback=_namespace, help=NAMESPACE_HELP)

# `-o` of the read commands that print a table, or the same rows as data.
table_output_option = click.option(
    "-o", "--output", "fmt", type=click.Choice(FORMATS), default="table",
    show_default=True, help="Output format.")


class Duration(click.ParamType):  # type: ignore[type-arg]
    """Seconds, or Go/kubectl durations (90s, 30m, 12h, 1h30m): the one grammar of every
    option that takes a time; ``minimum`` (seconds), when the option has one."""

    name = "duration"

    def __init__(self, minimum: float | None = None) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            seconds = float(value)
        else:
            from submit.render import duration  # late: only a command given one parses it

            try:
                seconds = duration.parse(str(value))
            except duration.DurationError as e:
                self.fail(str(e), param, ctx)
        if self.minimum is not None and seconds < self.minimum:
            self.fail(f"{value!r} is shorter than {self.minimum:g}s", param, ctx)
        return seconds


DURATION = Duration()


class PositiveNumber(click.ParamType):  # type: ignore[type-arg]
    """A finite number above zero, in ``unit`` (``--max-cost 250``): not nan, which no bound
    compares above, nor inf, and with the form allowed in the error."""

    name = "number"

    def __init__(self, unit: str, example: str) -> None:
        self.unit = unit
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        import math

        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or number <= 0:
            self.fail(f"{value!r} is not a number of {self.unit} above 0 such as "
                      f"{self.example}", param, ctx)
        return number


class LazyGroup(click.Group):
    """A group whose ``lazy`` commands (name -> (module, attribute, summary)) are imported
    only when run or their help is asked for; its help lists their summaries as given."""

    lazy: dict[str, tuple[str, str, str]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            module, attr, _ = self.lazy[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attr), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as e:
            # An xpk flag gets the option that does its job, not the nearest spelling.
            from submit.cli.xpk_flags import hint

            said = hint(e.option_name, e.ctx)
            if said is None:
                raise
            raise click.NoSuchOption(e.option_name, message=said, ctx=e.ctx) from None

    def format_commands(self, ctx: click.Context, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                rows.append((name, self.lazy[name][2]))
            else:
                cmd = self.commands[name]
                if not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(limit=10_000)))  # never cut
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def lazy_group(lazy: dict[str, tuple[str, str, str]]) -> type[LazyGroup]:
    return type("Lazy", (LazyGroup,), {"lazy": lazy})


def stack_source_options(f: F) -> F:
    """--stack, --outputs and --project-dir for a command outside the `workload` group
    (`submit cluster ...`): where it reads the stack's outputs (one of the first two)."""
    for option in reversed([
        click.option("--stack", envvar="ACCELSTACK_STACK", show_envvar=True, metavar="NAME",
                     shell_complete=complete("stacks"), help=STACK_HELP,
                     callback=one_source("stack")),
        click.option("--outputs", "outputs_file", envvar="ACCELSTACK_OUTPUTS",
                     show_envvar=True, metavar="FILE", type=click.Path(dir_okay=False),
                     help=OUTPUTS_HELP, callback=one_source("outputs")),
        click.option("--project-dir", envvar="ACCELSTACK_PROJECT_DIR", show_envvar=True,
                     default=".", show_default=True, metavar="DIR",
                     type=click.Path(file_okay=False), help=PROJECT_DIR_HELP),
    ]):
        f = option(f)
    return f
