"""Regenerate infra/replacements/forcenew.json from the ForceNew extraction kept in the shared
reference folder (../shared/reference/upstream/terraform-provider-google-beta-container-forcenew/).

    python tools/forcenew_data.py [--reference DIR] [--check]

The data keeps, per resource type, every path whose change replaces the resource (the
field's own ForceNew; a ForceNew block when it is added or removed), the conditional ForceNew
of CustomizeDiff, the node pool fields that the provider's update code never sends (a change
to one reads as an in-place update that never reaches GKE), and the SDK-only paths that no
source judges. Each row keeps its FILE:LINE at the source commit. ``--check`` exits 1 when the
file in the repository differs from what the reference gives (tests/test_replacements.py runs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "infra" / "replacements" / "forcenew.json"
REFERENCE = (ROOT.parent / "shared" / "reference" / "upstream"
             / "terraform-provider-google-beta-container-forcenew")
SOURCE_FILE = "forcenew-93c65b2.json"
OLDER_FILE = "forcenew-3dc173a.json"
# Node pool leaves that are neither ForceNew nor acted on by nodePoolUpdate
# (resource_container_node_pool.go:1798-2120 at 93c65b2 has no "placement_policy"): read
# from the provider's source, not derived, so the list names what was checked.
UNAPPLIED = {"gcp:container/nodePool:NodePool": ("placementPolicy.tpuTopology",
                                                 "placementPolicy.type")}
UPDATE_FUNCTION_AT = "resource_container_node_pool.go:1798 (nodePoolUpdate)"


def _pulumi_path(rows: list[dict[str, Any]], tf_path: str) -> str | None:
    plain = ".".join(p for p in tf_path.split(".") if not p.isdigit())
    for row in rows:
        if row["tf"] == plain:
            return str(row["pulumi"]) if row["pulumi"] else None
    return None


def build(reference: Path) -> dict[str, Any]:
    src = json.loads((reference / SOURCE_FILE).read_text())
    older = json.loads((reference / OLDER_FILE).read_text())
    out: dict[str, Any] = {
        "source": {
            "repo": src["source"]["repo"],
            "commit": src["source"]["commit"],
            "label": src["source"]["label"],
            "files": sorted(src["source"]["files"]),
            "bridgedBy": "pulumi-gcp 10.2.0 (the installed SDK); it bridges a v8.x commit of "
                         "terraform-provider-google-beta that no store here holds (pulumi-gcp's "
                         "snapshot ends at v9.35.0, upstream 3dc173a = v7.45.0); 93c65b2 is "
                         "'Merge feature branch major release 8.0.0' plus one docs commit, the "
                         "newest v8 source to be had, so it stands for the bridged version",
            "reference": "shared/reference/upstream/terraform-provider-google-beta-container-forcenew/"
                         + SOURCE_FILE,
            "rule": src["source"]["rule"],
        },
        "resources": {},
    }
    for rtype, res in src["resources"].items():
        rows = res["paths"]
        forcenew = []
        for row in rows:
            if not row["forceNew"] or not row["pulumi"]:
                continue
            forcenew.append({"path": row["pulumi"], "tf": row["tf"],
                             "kind": "block" if row.get("block") else "field",
                             "at": row["at"], "forceNewAt": row.get("forceNewAt") or row["at"],
                             # what the adoption check compares by (infra/adopt/forcenew.py)
                             "type": row.get("type"),
                             **({"computed": True} if row.get("computed") else {}),
                             **({"diffSuppress": row["diffSuppress"]}
                                if row.get("diffSuppress") else {}),
                             **({"via": row["via"]} if row.get("via") else {})})
        conditional = [{"path": _pulumi_path(rows, c["tfPath"]), "tf": c["tfPath"],
                        "at": c["at"], "how": c["how"]} for c in res["customizeDiffForceNew"]]
        unapplied = []
        for path in UNAPPLIED.get(rtype, ()):
            row = next(r for r in rows if r["pulumi"] == path)
            assert not row["forceNew"], path
            unapplied.append({"path": path, "tf": row["tf"], "at": row["at"],
                              "why": f"neither ForceNew nor sent by the update code "
                                     f"({UPDATE_FUNCTION_AT} handles no placement_policy)"})
        old_rows = {r["pulumi"]: r["forceNew"] for r in older["resources"][rtype]["paths"]
                    if r["pulumi"]}
        differs = sorted(r["path"] for r in forcenew if r["path"] not in old_rows)
        out["resources"][rtype] = {
            "forceNew": sorted(forcenew, key=lambda r: r["path"]),
            "conditional": conditional,
            "unapplied": unapplied,
            "unknown": sorted(res["sdkOnly"]),
            "notInV7_45_0": differs,
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = json.dumps(build(args.reference), indent=1, sort_keys=True) + "\n"
    if args.check:
        if DATA.read_text() != text:
            print(f"{DATA}: differs from {args.reference}; run tools/forcenew_data.py",
                  file=sys.stderr)
            return 1
        return 0
    DATA.write_text(text)
    print(f"wrote {DATA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
