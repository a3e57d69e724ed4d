"""Fetch the JobSet and Kueue CRDs the schema tests read, verified against committed checksums.

The tests validate rendered objects against the CRDs in ``../shared/reference/crds/``. On a
developer machine that folder is handed out; in the GitHub workflow nothing is beside the
checkout, so the offline job runs ``fetch``: it downloads the pinned release manifests by
URL, picks out the CustomResourceDefinitions, checks each one against
``tools/reference_crds.sha256`` and writes it where the tests look.

What is checksummed is each CRD *document*, normalised, not the release file's bytes:
the shared folder holds the files of ``config/components/crd/bases/`` at the release tags,
while ``manifests.yaml`` is ``kustomize build config/default`` of the same tag (both
projects' Makefile target ``artifacts``). Kustomize adds labels and annotations (common
labels, cert-manager CA injection) and a ``spec.conversion`` webhook patch to the CRDs
and re-serialises the YAML; it does not touch the schemas. So a document is normalised
by dropping ``metadata.labels``, ``metadata.annotations`` and ``spec.conversion`` and
dumping the rest as canonical JSON (sorted keys, no spaces), and hashed with SHA-256. The
same checksum then holds for the release manifest and for the bases, so it can be checked
here against ``../shared/reference/crds`` (``verify``) and in CI against the download.

Exit codes: 0 verified; 2 a CRD is missing or differs from its checksum (one line each).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any, Iterable

import yaml

HERE = Path(__file__).resolve().parent
CHECKSUMS = HERE / "reference_crds.sha256"

# The release manifests, as both projects' installation guides give them
# (kubernetes-sigs/jobset README "kubectl apply --server-side -f .../manifests.yaml";
# kubernetes-sigs/kueue README, same form). Versions match infra/config/addons.py defaults.
RELEASES = {
    "jobset": "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/"
              "manifests.yaml",
    "kueue": "https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/"
             "manifests.yaml",
}
# libyaml when present: the JobSet CRD alone is 800 kB of YAML.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_DROPPED_METADATA = ("labels", "annotations", "creationTimestamp")


class CrdError(Exception):
    """A CRD that is missing or does not match its committed checksum."""


def normalise(doc: dict[str, Any]) -> bytes:
    """The canonical bytes of a CRD document whose checksum is committed."""
    meta = {k: v for k, v in (doc.get("metadata") or {}).items() if k not in _DROPPED_METADATA}
    spec = {k: v for k, v in (doc.get("spec") or {}).items() if k != "conversion"}
    canonical = {"apiVersion": doc.get("apiVersion"), "kind": doc.get("kind"),
                 "metadata": meta, "spec": spec}
    return json.dumps(canonical, sort_keys=True, separators=(",", ":")).encode()


def checksum(doc: dict[str, Any]) -> str:
    return hashlib.sha256(normalise(doc)).hexdigest()


def file_name(doc: dict[str, Any]) -> str:
    """controller-gen's file name for a CRD: ``<group>_<plural>.yaml``."""
    return f"{doc['spec']['group']}_{doc['spec']['names']['plural']}.yaml"


def read_checksums(path: Path = CHECKSUMS) -> dict[str, str]:
    """File name -> SHA-256, from ``sha256sum``-style lines (comments allowed)."""
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            digest, name = line.split(maxsplit=1)
            out[name] = digest
    return out


def crds(text: str) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions of a multi-document YAML stream."""
    return [d for d in yaml.load_all(text, Loader=_LOADER)
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


def select(docs: Iterable[dict[str, Any]], expected: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The expected CRDs out of ``docs``, each verified; raises on the first problem."""
    found = {file_name(d): d for d in docs}
    problems = []
    for name, digest in sorted(expected.items()):
        doc = found.get(name)
        if doc is None:
            problems.append(f"{name}: not in the release manifests")
        elif checksum(doc) != digest:
            problems.append(f"{name}: checksum {checksum(doc)} does not match the committed "
                            f"{digest}")
    if problems:
        raise CrdError("; ".join(problems))
    return {name: found[name] for name in expected}


def verify_dir(directory: Path, expected: dict[str, str]) -> None:
    """Check that ``directory`` holds every expected CRD file with its checksum."""
    docs = []
    for name in sorted(expected):
        path = directory / name
        if not path.is_file():
            raise CrdError(f"{path}: missing")
        docs.extend(crds(path.read_text()))
    select(docs, expected)


def write(selected: dict[str, dict[str, Any]], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name, doc in selected.items():
        (dest / name).write_text(yaml.dump(doc, Dumper=_DUMPER, sort_keys=False))


def _download(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 (fixed https URLs)
        return str(resp.read().decode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download the release manifests, verify, write the CRDs")
    f.add_argument("--dest", type=Path, required=True)
    e = sub.add_parser("extract", help="verify and write the CRDs of local manifest files")
    e.add_argument("manifests", type=Path, nargs="+")
    e.add_argument("--dest", type=Path, required=True)
    v = sub.add_parser("verify", help="verify a folder of CRD files (e.g. shared/reference/crds)")
    v.add_argument("directory", type=Path)
    pr = sub.add_parser("print", help="print the normalised checksums of CRD files")
    pr.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args(argv)
    expected = read_checksums()
    try:
        if args.command == "fetch":
            docs = [d for url in RELEASES.values() for d in crds(_download(url))]
            write(select(docs, expected), args.dest)
        elif args.command == "extract":
            docs = [d for path in args.manifests for d in crds(path.read_text())]
            write(select(docs, expected), args.dest)
        elif args.command == "verify":
            verify_dir(args.directory, expected)
        else:
            for path in args.files:
                for doc in crds(path.read_text()):
                    print(f"{checksum(doc)}  {file_name(doc)}")
            return 0
    except (CrdError, OSError) as err:
        print(f"reference CRDs: {err}", file=sys.stderr)
        return 2
    print(f"reference CRDs: {len(expected)} verified", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
