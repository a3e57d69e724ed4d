"""`accelstack-prices refresh`: rewrite the price table's VM prices from the Cloud Billing
Catalog API, for the regions and machine types the stacks use; a maintainer reviews the
diff of infra/cost/prices.yaml like code.

The API (https://cloud.google.com/billing/v1/how-tos/catalog-api) lists a service's SKUs
(``GET /v1/services/SERVICE_ID/skus``; Compute Engine is ``6F81-5844-456A``), each with a
description, a category (``usageType``: OnDemand, Preemptible, Commit1Yr, ...), the
regions it is sold in (``serviceRegions``) and its prices over time (``pricingInfo``, each
with an ``effectiveTime`` and ``tieredRates`` of ``units`` + ``nanos`` USD per
``usageUnit``). A predefined VM's price is its vCPUs times its series' core SKU plus its
memory (GiB) times its series' RAM SKU ("E2 Instance Core running in Americas", "Spot
Preemptible E2 Instance Ram running in ..."). TPU and GPU SKUs are not matched: no source
found gives their descriptions, so their entries are left as they are (docs/limits.md).

``pricing`` is pure (recorded SKUs in, table entries out; tests/test_cost_refresh.py); only
``fetch`` reaches the API, and only when the command runs without ``--skus``. It calls the
API's REST surface (v1, https://cloud.google.com/billing/reference/rest/v1/services/list
and .../services.skus/list: ``GET /v1/services`` and ``GET /v1/services/SERVICE_ID/skus``,
each answering a page of ``services`` or ``skus`` and a ``nextPageToken`` that is empty on
the last page, ``pageSize`` 5000 by default) with ``requests`` and ``google-auth``'s
Application Default Credentials, both already the project's dependencies: Google's
``google-cloud-billing`` client needs a protobuf that pulumi-policy's pin excludes, so the
two could not share the README's environment (issue 42). ``fetch`` finds Compute Engine in
``services.list`` by its display name and checks its id.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, NoReturn, Sequence

import yaml

from infra.catalog.machines import vm_shape
from infra.config import stack_file
from infra.config.errors import ConfigError
from infra.config.pools import is_pools
from infra.config.fleet import is_fleet
from infra.config.stack import parse
from infra.cost.table import TABLE_FILE
from infra.record import record

SERVICE = "services/6F81-5844-456A"  # Compute Engine in the Cloud Billing Catalog
USAGE_TYPES = {"on-demand": "OnDemand", "spot": "Preemptible"}
SKU_PREFIX = {"on-demand": "", "spot": "Spot Preemptible "}


@record
class Wanted:
    """A VM price the stacks need: a machine type in a region, in a capacity mode."""

    machine_type: str
    region: str
    mode: str


def wanted(stacks_dir: Path) -> list[Wanted]:
    """The CPU machine types (system pools, CPU slice pools, Pathways head pools) of every
    cluster stack in ``stacks_dir``, in its region, on demand and Spot as configured."""
    out: set[Wanted] = set()
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        raw = stack_file.load(path).raw
        if is_fleet(raw) or is_pools(raw):
            continue
        try:
            cfg = parse(raw)
        except ConfigError:
            continue
        out.add(Wanted(cfg.system_pool.machine_type, cfg.region, "on-demand"))
        for pool in cfg.slices:
            if pool.accelerator.kind == "cpu" and pool.capacity.mode in USAGE_TYPES:
                out.add(Wanted(pool.accelerator.machine_type, cfg.region, pool.capacity.mode))
    return sorted(out, key=lambda w: (w.machine_type, w.region, w.mode))


def _usd(rate: Mapping[str, Any]) -> float:
    price = rate.get("unitPrice") or {}
    return int(price.get("units") or 0) + int(price.get("nanos") or 0) / 1e9


def _latest(sku: Mapping[str, Any]) -> tuple[str, float, str] | None:
    """(effectiveTime, USD per usage unit at the first tier, usage unit) of the SKU's
    latest price."""
    infos = sorted(sku.get("pricingInfo") or [], key=lambda p: str(p.get("effectiveTime")))
    if not infos:
        return None
    expr = infos[-1].get("pricingExpression") or {}
    rates = sorted(expr.get("tieredRates") or [],
                   key=lambda r: float(r.get("startUsageAmount") or 0))
    if not rates:
        return None
    return str(infos[-1].get("effectiveTime")), _usd(rates[0]), str(expr.get("usageUnit"))


def _find(skus: Iterable[Mapping[str, Any]], description: str, region: str,
          usage: str) -> Mapping[str, Any] | None:
    for sku in skus:
        if (str(sku.get("description", "")).startswith(description)
                and region in (sku.get("serviceRegions") or [])
                and (sku.get("category") or {}).get("usageType") == usage):
            return sku
    return None


def pricing(skus: Sequence[Mapping[str, Any]], want: Iterable[Wanted]
            ) -> tuple[list[dict[str, Any]], list[str]]:
    """Table entries for what is wanted, from SKUs in the API's documented shape; and one
    line per wanted price the SKUs do not give."""
    entries: list[dict[str, Any]] = []
    missing: list[str] = []
    for w in want:
        shape = vm_shape(w.machine_type)
        series = w.machine_type.split("-", 1)[0].upper()
        found = []
        for resource in ("Core", "Ram"):
            text = f"{SKU_PREFIX[w.mode]}{series} Instance {resource} running in"
            sku = _find(skus, text, w.region, USAGE_TYPES[w.mode])
            latest = _latest(sku) if sku else None
            if sku is not None and latest is not None:
                found.append((sku, latest))
        if shape is None or len(found) != 2:
            missing.append(f"vm/{w.machine_type} {w.mode} in {w.region}: no "
                           f"{series} core and RAM SKUs sold there in the response"
                           if shape else f"vm/{w.machine_type}: vCPUs and memory unknown")
            continue
        (core, (t1, per_core, _)), (ram, (t2, per_gib, _)) = found
        usd = shape.vcpus * per_core + shape.memory_gb * per_gib
        entries.append({
            "item": f"vm/{w.machine_type}", "unit": "vm-hour", "region": w.region,
            "mode": w.mode, "usd": round(usd, 6),
            "source": f"cloudbilling {SERVICE}/skus/{core['skuId']}+{ram['skuId']}",
            "date": max(t1, t2),
            "note": (f"{shape.vcpus} vCPUs x ${per_core:g}/h + {shape.memory_gb:g} GiB x "
                     f"${per_gib:g}/GiB-h"),
        })
    return entries, missing


def merged(text: str, entries: Sequence[Mapping[str, Any]], today: str) -> str:
    """The table file ``text`` with ``entries`` in place of those for the same item, region
    and mode, and its date moved to ``today``; the header comments kept."""
    header = "".join(line for line in text.splitlines(keepends=True)
                     if line.startswith("#"))
    data = yaml.safe_load(text)
    new = {_key(e): dict(e) for e in entries}
    kept = [e for e in data.get("prices") or [] if _key(e) not in new]
    data["prices"] = sorted(kept + list(new.values()), key=_key)
    data["asOf"] = today
    return header + str(yaml.safe_dump(data, sort_keys=False, width=100))


def _key(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    return str(entry["item"]), str(entry["region"]), str(entry["mode"])


ENDPOINT = "https://cloudbilling.googleapis.com"  # the Cloud Billing API's service endpoint
# The read-only scope services.list and services.skus.list accept (their "Authorization
# scopes": cloud-platform, cloud-billing or cloud-billing.readonly).
SCOPE = "https://www.googleapis.com/auth/cloud-billing.readonly"
COMPUTE = "Compute Engine"  # the service's displayName in services.list
PAGE_SIZE = 5000  # the API's default and the most it documents for a page
MAX_PAGES = 1000  # a bound on a list that never ends (Compute Engine has a few pages)
TIMEOUT = 60.0


class CatalogError(Exception):
    """The Catalog API could not be read; the message says why, on one line."""


def _session() -> Any:
    """A requests session that adds Application Default Credentials' token (their token
    endpoint is the credentials' own: a test's service-account file names a loopback one)."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError
    from google.auth.transport.requests import AuthorizedSession

    try:
        credentials, _ = google.auth.default(scopes=[SCOPE])
    except DefaultCredentialsError as e:
        raise CatalogError(f"no Application Default Credentials ({str(e).splitlines()[0]}); "
                           "run `gcloud auth application-default login`") from None
    return AuthorizedSession(credentials)  # type: ignore[no-untyped-call]


def _pages(session: Any, url: str, key: str, params: Mapping[str, str]
           ) -> Iterable[dict[str, Any]]:
    """Every item of a paged list (``key``: services or skus), following nextPageToken."""
    import requests
    from google.auth.exceptions import GoogleAuthError

    token = ""
    for _ in range(MAX_PAGES):
        query = {**params, "pageSize": str(PAGE_SIZE), **({"pageToken": token} if token else {})}
        try:
            answer = session.get(url, params=query, timeout=TIMEOUT)
        except (requests.RequestException, GoogleAuthError) as e:
            raise CatalogError(f"GET {url}: {e.__class__.__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else ''}") from None
        try:
            body = answer.json()
        except ValueError:
            body = None
        if answer.status_code != 200 or not isinstance(body, dict):
            # Google APIs answer an error as {"error": {"code", "message", "status"}}
            # (https://cloud.google.com/apis/design/errors#http_mapping).
            error = (body or {}).get("error") if isinstance(body, dict) else None
            why = (f"{error.get('status', '')}: {error.get('message', '')}"
                   if isinstance(error, dict) else "no JSON object")
            raise CatalogError(f"GET {url}: {answer.status_code} {why}".splitlines()[0])
        yield from body.get(key) or []
        token = str(body.get("nextPageToken") or "")
        if not token:
            return
    raise CatalogError(f"GET {url}: more than {MAX_PAGES} pages")


def fetch(endpoint: str = ENDPOINT) -> list[dict[str, Any]]:
    """Every Compute Engine SKU from the Cloud Billing Catalog API, as its REST API shapes
    them (camelCase), priced in USD."""
    session = _session()
    base = endpoint.rstrip("/")
    found = next((svc for svc in _pages(session, f"{base}/v1/services", "services", {})
                  if svc.get("displayName") == COMPUTE), None)
    if found is None:
        raise CatalogError(f"services.list has no service named {COMPUTE!r}")
    if found.get("name") != SERVICE:
        raise CatalogError(f"{COMPUTE} is {found.get('name')!r} in the Catalog, not "
                           f"{SERVICE!r}: update infra/cost/refresh.py SERVICE")
    return list(_pages(session, f"{base}/v1/{SERVICE}/skus", "skus", {"currencyCode": "USD"}))


def _read_skus(files: Sequence[str]) -> list[dict[str, Any]]:
    """The recorded responses; a file that cannot be read or is not one is a usage error:
    its one line on stderr, exit 2."""
    skus: list[dict[str, Any]] = []
    for name in files:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except OSError as e:
            _usage_error(f"--skus {name}: cannot read it: {e.strerror or e}")
        try:
            skus += json.loads(text).get("skus") or []
        except (ValueError, AttributeError) as e:
            _usage_error(f"--skus {name}: not a ListSkus response ({e.__class__.__name__})")
    return skus


def _usage_error(message: str) -> NoReturn:
    print(f"accelstack-prices: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """The `accelstack-prices` console script."""
    from datetime import date

    ap = argparse.ArgumentParser(prog="accelstack-prices", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("refresh", help="Rewrite the table's VM prices from the Catalog API.")
    r.add_argument("--stacks", default="stacks", metavar="DIR",
                   help="The stack files whose machine types and regions to price.")
    r.add_argument("--skus", action="append", default=[], metavar="FILE",
                   help="Read recorded ListSkus responses (JSON) instead of calling the API.")
    r.add_argument("--table", default=str(TABLE_FILE), metavar="FILE")
    r.add_argument("--write", action="store_true",
                   help="Write the table (default: print it to stdout).")
    r.add_argument("--endpoint", default=ENDPOINT, metavar="URL",
                   help="The Cloud Billing API's endpoint (a test serves one on loopback).")
    args = ap.parse_args(argv)
    try:
        skus = _read_skus(args.skus) if args.skus else fetch(args.endpoint)
    except CatalogError as e:
        print(f"accelstack-prices: the Cloud Billing Catalog API: {e}", file=sys.stderr)
        return 1
    entries, missing = pricing(skus, wanted(Path(args.stacks)))
    for line in missing:
        print(f"accelstack-prices: not priced: {line}", file=sys.stderr)
    table = Path(args.table)
    text = merged(table.read_text(encoding="utf-8"), entries, date.today().isoformat())
    if args.write:
        table.write_text(text, encoding="utf-8")
        print(f"wrote {table}: {len(entries)} prices from the Catalog API", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
