"""The `submit` command line: one Click group; each command group in its own module.

Exit codes (decided here, in Click and in `workload wait`; the README's table): 0 success;
1 an error the command reports (ClickException: the cluster, `pulumi stack output`, an
existing workload); 2 a bad or missing option or argument, or a bad file named by one
(BadParameter/UsageError, raised before anything is sent); 3 `wait`: the workload failed;
4 `wait`: the timeout passed first; `run` adds 5 (infrastructure failed), 6 (teardown did
not finish) and 130/143 (interrupted, torn down): submit/ephemeral/plan.py Exit. `workload run-local`
exits with the exit code of the process that failed the workload (0 when every process
exited 0; 130/143 when interrupted).
"""

from __future__ import annotations

import click

from submit.cli.options import lazy_group

# Each command's module is imported when the command runs (or its help is asked for):
# `submit --help` and shell completion of command names load none of them.
_COMMANDS = {
    "accelerators": ("submit.cli.accelerators", "accelerators",
                     "List the accelerator catalog or what a stack offers; resolve names."),
    "cluster": ("submit.cli.cluster", "cluster",
                "The stack's cluster for other tools: kubeconfig credentials for kubectl."),
    "fleet": ("submit.cli.fleet", "fleet",
              "A fleet of clusters behind one queue (Kueue MultiKueue): its clusters and quota."),
    "workload": ("submit.cli.workload", "workload",
                 "Run training workloads as JobSets on a stack's cluster."),
    "run": ("submit.cli.run", "run",
            "Bring a stack up for one piece of work and take it down, whatever happens."),
    "reap": ("submit.cli.run", "reap",
             "Take down expired stacks of `submit run` (a crash left them up)."),
    "experiment": ("submit.cli.experiment", "experiment",
                   "Sweeps as one experiment: trials from a file, submitted and managed "
                   "together."),
}


@click.group(cls=lazy_group(_COMMANDS), context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="accelstack")
def main() -> None:
    """Render, check and run training workloads on an accelstack cluster.

    Shell completion: see docs/submitting.md ("Shell completion"), e.g. for bash
    `eval "$(_SUBMIT_COMPLETE=bash_source submit)"`.
    """
