"""Pulumi entry point (``main: infra/`` in Pulumi.yaml)."""

import os
import sys

# Pulumi runs this file with infra/ as the program directory; make the project root
# importable so ``import infra`` works with or without an installed package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from infra.program import run  # noqa: E402

run()
