"""Field parsers shared by every layer of the stack config: GKE names and label maps.

The bottom of the config layers (with ``infra.reader`` and ``infra.errors``): it knows no
section of the stack file, only the rules GKE and GCP apply to a name or a label wherever
it appears. Pure; no pulumi.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from infra.errors import show
from infra.reader import Reader

# GKE names: a lowercase letter first, then lowercase letters, digits and hyphens, ending
# in a letter or digit; clusters and node pools at most 40 characters.
GKE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
LABEL_KEY = re.compile(r"^[a-z][-_a-z0-9]{0,62}\Z")
LABEL_VALUE = re.compile(r"^[-_a-z0-9]{0,63}\Z")


def check_gke_name(r: Reader, path: str, name: str, limit: int = 40) -> None:
    r.check(bool(GKE_NAME.match(name)) and len(name) <= limit, path,
            f"{show(name)} is not a valid GKE name (1-{limit} lowercase letters, digits and "
            "hyphens, starting with a letter and ending with a letter or digit)")


def parse_labels(r: Reader, value: Any, path: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        r.fail(path, f"{show(value)} is not a mapping of label keys to values")
        return {}
    out = {}
    for k, v in value.items():
        if not LABEL_KEY.match(str(k)):
            r.fail(f"{path}.{k}", "is not a GCP label key (lowercase letters, digits, '-' and "
                   "'_', starting with a letter, at most 63 characters)")
        elif not isinstance(v, str) or not LABEL_VALUE.match(v):
            r.fail(f"{path}.{k}", f"{show(v)} is not a GCP label value (at most 63 lowercase "
                   "letters, digits, '-' and '_')")
        else:
            out[str(k)] = v
    return out
