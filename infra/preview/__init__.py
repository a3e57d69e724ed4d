"""The offline harness: the program under the Pulumi SDK's mock engine, and the
`accelstack-preview` command (cli.py) that prints a stack's desired state and checks snapshots.

May import: infra
Must not import: submit
"""


def main() -> None:
    """The `accelstack-preview` console script (pyproject.toml), loaded on first use."""
    from infra.preview import interrupt

    interrupt.install()  # before anything heavy is imported: Ctrl-C is exit 130, always
    from infra.preview.cli import main as run
    run()
