"""What every `submit` command shares: the context (where the stack's outputs come from,
loaded once, on demand, and the cluster they point at), the exit codes, and the one place
where errors become Click's: a bad option or argument is a BadParameter or UsageError (exit
2), what the cluster or the outputs report is a ClickException (exit 1).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator

import click

from submit.render.spec import SpecError

EXIT_FAILED = 3  # `wait`: the workload failed
EXIT_TIMEOUT = 4  # `wait`: the timeout passed first
# `fleet view`: no cluster of the fleet answered (the view still says why, per cluster);
# the exit of a command the cluster's answer failed (docs/fleets.md).
EXIT_UNREACHABLE = 1


@contextmanager
def bad_input() -> Iterator[None]:
    """Where a SpecError (a bad option or argument) becomes Click's usage error, exit 2."""
    try:
        yield
    except SpecError as e:
        raise click.BadParameter(e.message, param_hint=f"'{e.option}'") from None


class Context:
    """What every command shares: where the outputs come from, loaded once, on demand."""

    def __init__(self, stack: str | None, outputs_file: str | None, project_dir: str,
                 namespace: str | None = None) -> None:
        self.stack = stack
        self.outputs_file = outputs_file
        self.project_dir = project_dir
        self.namespace = namespace
        self._outputs: Any = None
        self._cluster: Any = None
        self._workers: dict[str, Any] = {}

    @property
    def outputs(self) -> Any:
        if self._outputs is None:
            from submit.cluster.stack_outputs import OptionError, OutputsError, read

            try:
                self._outputs = read(self.stack, self.outputs_file, self.project_dir)
            except OptionError as e:
                if e.option is None:
                    raise click.UsageError(str(e)) from None
                raise click.BadParameter(str(e), param_hint=f"'{e.option}'") from None
            except OutputsError as e:
                raise click.ClickException(str(e)) from None
        return self._outputs

    @property
    def cluster(self) -> Any:
        if self._cluster is None:
            from submit.cluster.kube import Cluster, KubeError

            try:
                self._cluster = Cluster(self.outputs.kubeconfig)
            except KubeError as e:
                raise click.ClickException(str(e)) from None
        return self._cluster


    def worker_cluster(self, name: str) -> Any:
        """A fleet worker's cluster, reached with the kubeconfig of its own contract (the
        user's credentials, as for the manager; docs/fleets.md)."""
        if name not in self._workers:
            from submit.cluster.kube import Cluster, KubeError

            fleet = self.outputs.fleet
            worker = fleet.worker(name) if fleet is not None else None
            if worker is None:
                raise click.ClickException(f"{name!r} is not a worker of this fleet")
            try:
                self._workers[name] = Cluster(worker.outputs.kubeconfig)
            except KubeError as e:
                raise click.ClickException(f"worker {name}: {e}") from None
        return self._workers[name]


pass_ctx = click.make_pass_decorator(Context)


def kube_call(fn: Callable[[], Any]) -> Any:
    """Run a cluster call; its KubeError becomes the command's error (exit 1)."""
    from submit.cluster.kube import KubeError

    try:
        return fn()
    except KubeError as e:
        raise click.ClickException(str(e)) from None


def apply_objects(ctx: Context, objs: list[dict[str, Any]], replace: bool = False) -> None:
    """Apply a rendered workload (submit.api.submit): refuse to overwrite a live one unless
    --replace."""
    from submit import api

    progress: Any = None

    def waiting(seconds: float) -> None:
        nonlocal progress
        if progress is None:
            from submit.cli.progress import Progress

            progress = Progress()
            progress.line("--replace: deleting the running workload; waiting until it is gone")
        progress.sleep(seconds, "deleting the running workload")

    try:
        done = api.submit(ctx.cluster, objs, replace, waiting)
    except api.ClusterError as e:
        raise click.ClickException(e.message) from None
    finally:
        if progress is not None:
            progress.done()
    if done.held:
        click.echo(f"workload {done.name} created held in namespace {done.namespace} "
                   f"(queue {done.queue}); `submit workload release {done.name}` hands it to "
                   "Kueue", err=True)
        return
    from submit.cli.next_steps import lines

    js = next(o for o in objs if o["kind"] == "JobSet")
    stack_args = (["--outputs", ctx.outputs_file] if ctx.outputs_file
                  else ["--stack", ctx.stack] if ctx.stack else [])
    if done.namespace != ctx.outputs.workload_namespace:
        stack_args += ["-n", done.namespace]
    click.echo("\n".join(lines(js, ctx.outputs.cluster, stack_args)), err=True)
