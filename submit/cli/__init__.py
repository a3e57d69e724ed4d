"""The command line: one Click module per command group (app.py is the root group), option
parsing into typed objects, output formatting and progress. The only layer that imports click,
besides the preview command. Shell completion alone reads a stack file (infra.config.stack,
.stack_file) to offer pool names without running pulumi.

May import: submit, infra.catalog, infra.contract, infra.config.errors, infra.config.stack, infra.record, infra.lazy_re,
    infra.config.stack_file
Must not import: pulumi, pulumi_gcp, pulumi_kubernetes
"""


def main() -> None:
    """The `submit` console script (pyproject.toml), loaded on first use."""
    from submit.cli.app import main as run
    run()
