"""Flags of xpk that people type from habit, and the option of ours that does the same job in
the command they typed.

Click's own suggestion goes by spelling, so xpk's ``--tpu-type`` got ``--output``; a user
coming from xpk is told the option that means the same thing instead, and only one that the
command (or a group before it) has: ``submit run`` takes its stack as an argument, not
``--stack``, and ``submit accelerators`` takes accelerator names as arguments. The xpk flags
are those of ``xpk workload create`` (AI-Hypercomputer/xpk@367c838253bea41e7d7716145ad6513f44c1a21e,
``src/xpk/parser/workload.py``: ``--tpu-type``/``--device-type`` "v5litepod-16, h100-80gb-8,
...", ``--docker-image``, ``--base-docker-image``, ``--cluster``,
``--use-parallel-containers``, ``--docker-image-pull-secret``); our catalog takes xpk's
accelerator names as they are (docs/accelerators.md).
"""

from __future__ import annotations

from typing import Any

# xpk's flag -> where its job is done here, in order of preference: (our option, or
# "ARG:<name>" for a command's argument; what to tell). The first the command has is named.
_ACCELERATOR_NAMES = "xpk's names, such as v5litepod-16, are accepted as they are"
XPK_FLAGS: dict[str, tuple[tuple[str, str], ...]] = {
    "--tpu-type": (
        ("--accelerator", f"--accelerator ({_ACCELERATOR_NAMES})"),
        ("ARG:names", f"the NAME argument (`submit accelerators v5litepod-16`; "
                      f"{_ACCELERATOR_NAMES})")),
    "--device-type": (
        ("--accelerator", "--accelerator (xpk's names, such as h100-80gb-8, are accepted as "
                          "they are)"),
        ("ARG:names", "the NAME argument (`submit accelerators h100-80gb-8`; xpk's names are "
                      "accepted as they are)")),
    "--docker-image": (("--image", "--image"),),
    "--base-docker-image": (("--base-image", "--base-image (with --script-dir)"),),
    "--cluster": (
        ("--stack", "--stack STACK (a stack names its cluster) or --outputs FILE, given "
                    "{where}"),
        ("ARG:stack", "the STACK argument (`submit run STACK`: a stack file or a stack "
                      "name; the run makes its own cluster)")),
    "--use-parallel-containers": (
        ("--parallel-containers", "--parallel-containers N (containers per VM; "
                                  "docs/submitting.md)"),),
    "--docker-image-pull-secret": (
        ("--image-pull-secret", "--image-pull-secret NAME (repeatable)"),),
}


def _has(ctx: Any, where: str) -> str | None:
    """Where the command of ``ctx`` takes ``where`` (an option, or ``ARG:name`` an argument
    of the command itself): "after the command", "before the command", both, or None."""
    import click

    if where.startswith("ARG:"):
        command = getattr(ctx, "command", None)
        found = any(isinstance(p, click.Argument) and p.name == where[4:]
                    for p in getattr(command, "params", ()))
        return "as the command's argument" if found else None
    places = []
    level = ctx
    while level is not None:
        if any(where in p.opts for p in level.command.params if isinstance(p, click.Option)):
            places.append("after the command" if level is ctx else "before the command")
        level = level.parent
    return " or ".join(sorted(set(places), reverse=True)) or None


def hint(option: str, ctx: Any = None) -> str | None:
    """The error for xpk's ``option`` (``--tpu-type=v5e-16`` included) in the command of
    ``ctx`` (a click.Context; None: any), or None when it is not one of xpk's flags."""
    name = option.split("=", 1)[0]
    ours = XPK_FLAGS.get(name)
    if ours is None:
        return None
    for where, text in ours:
        place = "before the command or after it" if ctx is None else _has(ctx, where)
        if place:
            said = text.format(where=place.replace("or after the command", "or after it"))
            return f"No such option '{name}': that is xpk's flag; here it is {said}."
    command = getattr(ctx, "command_path", "this command")
    return (f"No such option '{name}': that is xpk's flag, and `{command}` has nothing "
            f"like it (its options: `{command} --help`).")
