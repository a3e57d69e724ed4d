"""`submit run`'s work: the options of `workload create`, a job-group file or an experiment
file, checked without the stack (``prepare``), then against the outputs the run's stack
will have (``Prepared.check``: the same render the run does after `up`, through the one
check path, submit/render/check.py), before the pulumi CLI is looked for; the image pinned
by digest last (``Prepared.pin``, the only step that asks a registry).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from infra.record import field_names, record
from submit.cli.create_options import CreateOptions

NOT_FOR_RUN = ("dry_run", "fmt", "export_file", "replace", "after")


@record
class Prepared:
    name: str  # the default run name
    work: Any  # submit.ephemeral.runner.Work
    check: Callable[[Any], None]  # StackOutputs -> None; click exceptions (exit 2)
    pin: Callable[[], None]


def prepare(options: dict[str, Any], group_file: str | None, experiment_file: str | None,
            timeout: float, interval: float, logs_dir: str | None) -> Prepared:
    """The work, checked as far as it can be without the stack or the network."""
    from submit.ephemeral.runner import Work

    given = [o for o, v in (("--workload", options.get("name")), ("--group", group_file),
                            ("--experiment", experiment_file)) if v]
    if len(given) != 1:
        raise click.UsageError("give the work as one of: workload options (--workload NAME "
                               "--accelerator ... as for `workload create`), --group FILE "
                               f"or --experiment FILE{f' (got {given})' if given else ''}")
    if group_file:
        from submit.experiment import group as gr

        text = _read(group_file, "--group")
        try:
            group = gr.load(group_file, text)
        except gr.GroupError as e:
            raise click.BadParameter(e.message, param_hint="'--group'") from None

        def check_group(outputs: Any) -> None:
            try:
                gr.render_group(group, outputs)
            except gr.GroupError as e:
                raise click.BadParameter(e.message, param_hint="'--group'") from None
        return Prepared(group.name, Work(f"job group {group.name}",
                                         lambda outputs: [gr.render_group(group, outputs)],
                                         timeout, interval, logs_dir), check_group, _nothing)
    if experiment_file:
        from submit.experiment import expand, trials

        _read(experiment_file, "--experiment")
        try:
            exp = expand.load(experiment_file)
        except expand.ExperimentError as e:
            raise click.BadParameter(e.message, param_hint="'--experiment'") from None

        def check_experiment(outputs: Any) -> None:
            try:
                trials.plan(exp, outputs)
            except expand.ExperimentError as e:
                raise click.BadParameter(e.message, param_hint="'--experiment'") from None
        return Prepared(exp.name, Work(
            f"experiment {exp.name} ({len(exp.trials)} trials)",
            lambda outputs: [t.objects for t in trials.plan(exp, outputs)],
            timeout, interval, logs_dir), check_experiment, _nothing)
    return _workload(options, timeout, interval, logs_dir)


def _workload(options: dict[str, Any], timeout: float, interval: float,
              logs_dir: str | None) -> Prepared:
    from submit.cli.context import bad_input
    from submit.ephemeral.runner import Work

    given_options: dict[str, Any] = {f: options.get(f) for f in field_names(CreateOptions)
                                     if f not in NOT_FOR_RUN}
    opts = CreateOptions(**given_options,
                         dry_run=False, fmt="yaml", export_file=None, replace=False)
    if not opts.accelerator:
        raise click.UsageError("Missing option '--accelerator' (with --workload).")
    wl = opts.workload()
    with bad_input():
        wl.check()
    if opts.builds_image and opts.script_dir is None and opts.image is None:
        raise click.UsageError("pass --image, or --script-dir with --base-image")
    pins: dict[str, str] = {}

    def check(outputs: Any) -> None:
        # An image --script-dir builds exists only once pushed, after `up`: the base image
        # it is built on stands in for it (its reference was checked like any image).
        checked = wl
        if opts.builds_image:
            from submit.cli.bundle import check_script_options

            check_script_options(outputs, script_dir=opts.script_dir,
                                 base_image=opts.base_image, image=opts.image,
                                 image_repository=opts.image_repository)
            checked = wl.replace(image=opts.base_image or opts.image)
        with bad_input():
            checked.verdict(outputs).rendered()

    def pin() -> None:
        # The tag resolved once, before anything is made: every worker runs the same bytes,
        # and a tag that does not exist costs no cluster.
        if not opts.builds_image:
            from submit.cli.image_pin import resolve_all

            pins.update(resolve_all([opts.image], enabled=opts.resolve_image is not False,
                                    offline_ok=False))

    def render(outputs: Any) -> list[list[dict[str, Any]]]:
        workload = wl
        if opts.builds_image:
            from submit.cli.bundle import script_image

            workload = wl.replace(image=script_image(
                outputs, script_dir=opts.script_dir, base_image=opts.base_image,
                image=opts.image, image_repository=opts.image_repository,
                accelerator=opts.accelerator, pool=opts.pool, push=True))
        objs = workload.render(outputs)
        if pins:
            from submit.render.jobset import pin_images

            pin_images(objs, pins)
        return [objs]

    return Prepared(opts.name, Work(f"workload {opts.name}", render, timeout, interval,
                                    logs_dir), check, pin)


def _nothing() -> None:
    """A job group's or an experiment's images are pinned as they are submitted."""


def _read(file: str, option: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise click.BadParameter(f"{file}: cannot read it: "
                                 f"{getattr(e, 'strerror', None) or 'not UTF-8 text'}",
                                 param_hint=f"'{option}'") from None
