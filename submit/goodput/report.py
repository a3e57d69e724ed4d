"""A workload's goodput and badput breakdown, computed by ml-goodput-measurement itself.

The library (AI-Hypercomputer/ml-goodput-measurement, PyPI ``ml-goodput-measurement``,
src/goodput.py) keys a run by ``job_name`` and reads its entries from the Cloud Logging log
``logger_name``; MaxText names them ``run_name`` and ``goodput_<run_name>``, and so does
accelstack: the run name is the workload's name (``names``). ``GoodputCalculator`` takes a
``cloud_logger``, the library's one seam to Cloud Logging: ``None`` makes it build its own
over ``google.cloud.logging.Client()`` (the real log, in ``GOOGLE_CLOUD_PROJECT``), and
``RecordedLog`` below serves entries recorded in the library's own payload format (a JSON
lines file: one ``jsonPayload`` a line), for offline reports and the tests.

The library is an optional extra (``accelstack[goodput]``): it brings Google's Cloud
Logging, Monitoring and Storage clients, numpy and scipy, which nothing else of `submit`
needs (docs/dependencies.md).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

EXTRA = "pip install 'accelstack[goodput]'"


class GoodputError(Exception):
    """A report that cannot be made: the message says why, in one line."""


def names(workload: str) -> tuple[str, str]:
    """(run name, log name) a workload records under."""
    return workload, f"goodput_{workload}"


def _timestamp(payload: dict[str, Any]) -> datetime.datetime | None:
    stamps = [v for k, v in payload.items() if k.endswith("_time") and
              isinstance(v, (int, float))]
    if not stamps:
        return None
    return datetime.datetime.fromtimestamp(min(stamps), tz=datetime.timezone.utc)


class RecordedLog:
    """Entries recorded in the library's payload format, served as its ``_CloudLogger``
    serves Cloud Logging's (``read_cloud_logging_entries``), for one run."""

    def __init__(self, job_name: str, entries: list[dict[str, Any]]) -> None:
        self.job_name = job_name
        self.job_start_time: datetime.datetime | None = None
        self.entries = [e for e in entries if e.get("job_name") == job_name]

    def write_cloud_logging_entry(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)

    def read_cloud_logging_entries(self, start_time: datetime.datetime | None = None,
                                   end_time: datetime.datetime | None = None,
                                   last_entry_info: Any = None) -> tuple[list[Any], Any]:
        out = []
        for entry in self.entries:
            at = _timestamp(entry)
            if at is None:
                continue
            if start_time is not None and at <= _aware(start_time):
                continue
            if end_time is not None and at > _aware(end_time):
                continue
            out.append(entry)
        last = (_timestamp(out[-1]), str(len(out))) if out else (None, None)
        return out, last


def _aware(at: datetime.datetime) -> datetime.datetime:
    return at if at.tzinfo else at.replace(tzinfo=datetime.timezone.utc)


def read_entries(path: Path) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise GoodputError(f"{path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(value, dict):
            raise GoodputError(f"{path}:{number}: not a log entry's jsonPayload object")
        out.append(value)
    return out


def report(workload: str, *, log: Any = None, cache_dir: str = "/tmp") -> dict[str, Any]:
    """{"run", "goodput", "badput": {kind: percent}, "lastStep"} for ``workload``'s run,
    from ``log`` (a RecordedLog) or, with None, the real Cloud Logging log."""
    try:
        from ml_goodput_measurement.src import goodput  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise GoodputError(f"the goodput report needs ml-goodput-measurement: {EXTRA}"
                           ) from None
    run, logger_name = names(workload)
    calc = goodput.GoodputCalculator(job_name=run, logger_name=logger_name, cloud_logger=log,
                                     cache_dir=cache_dir)
    try:
        value, badput, last_step = calc.get_job_goodput(include_badput_breakdown=True)
    except ValueError as e:
        raise GoodputError(f"no goodput for run {run}: {e}") from None
    return {"run": run, "goodput": round(float(value), 4), "badput": _flat(badput),
            "lastStep": last_step}


def _flat(badput: dict[Any, Any]) -> dict[str, float]:
    """The library's breakdown by BadputType name; custom badput events (a mapping of the
    workload's own event types) as CUSTOM_BADPUT_EVENTS/<type>."""
    out: dict[str, float] = {}
    for kind, value in badput.items():
        name = str(getattr(kind, "name", kind))
        if isinstance(value, dict):
            for event, share in sorted(value.items()):
                out[f"{name}/{event}"] = round(float(share), 4)
        else:
            out[name] = round(float(value), 4)
    return out


def lines(found: dict[str, Any]) -> list[str]:
    out = [f"run {found['run']}: goodput {found['goodput']:.2f}% (last step "
           f"{found['lastStep']})", "badput:"]
    out += [f"  {kind}: {value:.2f}%" for kind, value in found["badput"].items()]
    return out
