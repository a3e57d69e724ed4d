"""What a stack that reads other stacks writes of them (a fleet's manager and workers, a
pools stack's host): their names, and the namespaces it names on their clusters.
Must not import pulumi.
"""

from __future__ import annotations

from typing import Any, Mapping

from infra.config.errors import show
from infra.config.reader import Reader
from infra.lazy_re import later
from infra.record import record

# Pulumi stack names ("letters, digits, '-', '_' and '.'"), optionally org/stack or
# org/project/stack (https://www.pulumi.com/docs/iac/concepts/stacks/).
STACK_NAME = later(r"^(?:[A-Za-z0-9_.-]+/){0,2}[A-Za-z0-9_.-]+\Z")
NAMESPACE = later(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")  # a DNS-1123 label


def short(name: str) -> str:
    """A stack's own name, without its org and project."""
    return name.rsplit("/", 1)[-1]


@record
class StackRef:
    """A stack reference written ``STACK``, ``ORG/STACK`` or ``ORG/PROJECT/STACK``, its parts
    apart. A part not written is None: Pulumi fills the project with the current one and
    the org with the default org (https://www.pulumi.com/docs/iac/concepts/stacks/,
    "Stack references"), which the program does not always know."""

    org: str | None
    project: str | None
    stack: str

    def same(self, other: "StackRef") -> bool:
        """Whether both may name one stack: the same stack name, and the same org and
        project wherever both are known. Two spellings of one stack compare equal, so a
        check that refuses a stack named twice takes the safe side."""
        return self.stack == other.stack and all(
            a is None or b is None or a == b
            for a, b in ((self.org, other.org), (self.project, other.project)))


def ref(name: str, project: str | None = None) -> StackRef:
    """``name`` normalised; ``project`` is the current project (None when not known)."""
    parts = name.split("/")
    if len(parts) == 3:
        return StackRef(parts[0], parts[1], parts[2])
    if len(parts) == 2:
        return StackRef(parts[0], project, parts[1])
    return StackRef(None, project, name)


def check_stack_name(r: Reader, path: str, value: str) -> bool:
    """Report ``value`` at ``path`` unless it is a stack name; whether it is one."""
    if value and not STACK_NAME.match(value):
        r.fail(path, f"{show(value)} is not a stack name (letters, digits, '-', '_' and '.', "
               "optionally as ORG/STACK or ORG/PROJECT/STACK)")
        return False
    return True


def namespaces(r: Reader, top: Mapping[str, Any], path: str) -> list[str]:
    """The ``namespaces`` list under ``path``: each a namespace name, none twice."""
    out: list[str] = []
    for i, ns in enumerate(r.get(top, "namespaces", path, list, default=[]) or []):
        if not isinstance(ns, str) or not NAMESPACE.match(ns):
            r.fail(f"{path}.namespaces[{i}]", f"{show(ns)} is not a namespace name")
        elif ns in out:
            r.fail(f"{path}.namespaces[{i}]", f"{show(ns)} is listed twice")
        else:
            out.append(ns)
    return out
