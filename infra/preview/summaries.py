"""The summary that opens a stack's preview (resources by type, outputs and pools, the
policy verdict, the cost), as lines for people and as data for `--summary -o json`."""

from __future__ import annotations

from typing import Any


def summary(doc: dict[str, Any], by_type: bool = True) -> list[str]:
    """The lines that open a stack's preview: resources (by type), outputs, policy verdict."""
    from collections import Counter

    counts = Counter(r["type"] for r in doc["resources"])
    findings = doc["policy"]["findings"]
    violations = [f for f in findings if "waived" not in f]
    verdict = ("policy: ok" if not findings else
               f"policy: {len(violations)} violation(s), "
               f"{len(findings) - len(violations)} waived finding(s)")
    outputs = doc["outputs"]
    contract = outputs.get("accelstack", {}) if isinstance(outputs, dict) else {}
    pools = ", ".join(f"{p.get('name')} ({p.get('accelerator')} x{p.get('sliceCount')}, "
                      f"{p.get('capacityMode')})" for p in contract.get("slicePools", []))
    lines = [f"stack {doc['stack']}: {sum(counts.values())} resources",
             *(f"  {n:4d} {t}" for t, n in sorted(counts.items()) if by_type),
             f"outputs: {', '.join(sorted(outputs)) or 'none'}"
             + (f"; pools: {pools}" if pools else ""),
             verdict]
    if isinstance(contract.get("maintenance"), dict):  # window, exclusions: until when
        from infra.contract import maintenance

        info = maintenance.load(contract["maintenance"], "maintenance", ValueError)
        lines += maintenance.summary_lines(info) if info else []
    if "cost" in doc:
        from infra.preview import costs

        lines += costs.summary_lines(doc["cost"])
    return lines


def summary_data(doc: dict[str, Any]) -> dict[str, Any]:
    """The summary's figures as data (`--summary -o json`)."""
    from collections import Counter

    findings = doc["policy"]["findings"]
    outputs = doc["outputs"]
    contract = outputs.get("accelstack", {}) if isinstance(outputs, dict) else {}
    return {
        "resources": len(doc["resources"]),
        "outputs": sorted(outputs),
        "slicePools": [{k: p.get(k) for k in ("name", "accelerator", "sliceCount",
                                               "capacityMode")}
                       for p in contract.get("slicePools", [])],
        "policy": {"violations": sum("waived" not in f for f in findings),
                   "waived": sum("waived" in f for f in findings)},
        "resourcesByType": dict(sorted(Counter(r["type"] for r in doc["resources"]).items())),
        **({"costPerHour": doc["cost"].get("perHour")} if "cost" in doc else {}),
    }
