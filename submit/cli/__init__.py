"""The command line: one Click module per command group (app.py is the root group), option
parsing into typed objects, output formatting and progress. The only layer that imports click,
besides the preview command. Shell completion alone reads a stack file (infra.config.stack,
.stack_file) to offer pool names without running pulumi.

May import: submit, infra.catalog, infra.contract, infra.config.errors, infra.config.stack, infra.record, infra.lazy_re,
    infra.config.stack_file, infra.cost
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes
"""


# Starting up, the command allocates tens of thousands of objects (modules, classes, Click's
# options) that all live to the end; at Python's default first-generation threshold (700)
# the cyclic collector runs 38 times in a `create --dry-run` and frees almost nothing, at
# 10,000 it runs 16 times (most of them before this line), about 1.5 ms of 75 ms
# (bench/cold_dry_run.py). A larger threshold still collects: long `wait` and `run` loops
# keep freeing their cycles.
GC_THRESHOLD = 10_000


def main() -> None:
    """The `submit` console script (pyproject.toml), loaded on first use."""
    import gc

    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    from submit.cli.app import main as run
    try:
        run()
    finally:
        # The process ends here. Python's shutdown would run the cyclic collector over
        # every object still alive (all of them long-lived: modules, classes, the
        # command's options) several times, which costs a short command more than its
        # work; frozen objects are skipped. Memory goes back to the system at exit, and
        # `atexit` hooks and plain reference counting still run as before.
        gc.freeze()
