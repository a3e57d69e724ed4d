"""The JobSet's network on one machine: pod DNS names rewritten to loopback, and ports that
several local processes would bind moved to free ports of their own, with the addresses and
``*_PORT`` variables that name them rewritten to match.

Pure: free ports come from the caller.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence

LOOPBACK = "127.0.0.1"


def port_map(pod_ports: Sequence[tuple[str, Sequence[int]]], free_port: Callable[[], int]
             ) -> dict[tuple[str, int], int]:
    """(hostname, port) -> local port for each pod's declared ports: a port only one pod
    declares stays as it is; each (pod, port) of a port several pods declare gets a free
    port of its own."""
    declared: dict[int, int] = {}
    for _, ports in pod_ports:
        for p in ports:
            declared[p] = declared.get(p, 0) + 1
    mapping: dict[tuple[str, int], int] = {}
    for hostname, ports in pod_ports:
        for p in ports:
            mapping[(hostname, p)] = free_port() if declared[p] > 1 else p
    return mapping


class Hosts:
    """Rewrites the JobSet's pod DNS names (and the ports they are reached on) to loopback."""

    def __init__(self, hostnames: Sequence[str], subdomain: str, namespace: str,
                 ports: Mapping[tuple[str, int], int]) -> None:
        self.ports = ports
        alts = "|".join(re.escape(h) for h in sorted(hostnames, key=len, reverse=True))
        sub, ns = re.escape(subdomain), re.escape(namespace)
        self.pattern = re.compile(
            rf"(?<![\w.-])({alts})\.{sub}(?:\.{ns}(?:\.svc(?:\.cluster\.local)?)?)?"
            rf"(?::(\d+))?(?![\w-])") if hostnames else None

    def rewrite(self, text: str) -> str:
        if self.pattern is None:
            return text

        def sub(m: re.Match[str]) -> str:
            if m.group(2) is None:
                return LOOPBACK
            port = int(m.group(2))
            return f"{LOOPBACK}:{self.ports.get((m.group(1), port), port)}"
        return self.pattern.sub(sub, text)

    def host_of(self, text: str) -> str | None:
        m = self.pattern.search(text) if self.pattern else None
        return m.group(1) if m else None


def port_vars(env: list[tuple[str, str]], hosts: Hosts) -> dict[str, str]:
    """``X_PORT`` values to move with the address they go with (``X_ADDRESS``, ``X_ADDR`` or
    ``X_HOST`` or ``X`` naming a pod, e.g. COORDINATOR_ADDRESS/COORDINATOR_PORT, MASTER_ADDR/
    MASTER_PORT)."""
    values = dict(env)
    out = {}
    for name, value in env:
        if not name.endswith("_PORT") or not value.isdigit():
            continue
        prefix = name[:-len("_PORT")]
        for suffix in ("_ADDRESS", "_ADDR", "_HOST", ""):
            host = hosts.host_of(values.get(prefix + suffix, ""))
            if host is not None and (host, int(value)) in hosts.ports:
                out[name] = str(hosts.ports[(host, int(value))])
                break
    return out
