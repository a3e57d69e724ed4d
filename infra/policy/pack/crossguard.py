"""The CrossGuard runner of ``infra.policy.rules``: one stack policy per rule, same functions.

``pulumi preview --policy-pack infra/policy/pack`` (and ``pulumi up``) hands each stack
policy every resource of the stack with its properties; the stack's config reaches the
pack through the Pulumi runtime (pulumi-policy 0.4.0 and later let a pack read
``pulumi.Config``). Both are turned into the plain ``policy.Item`` list the offline preview
builds from the mock engine, and the rule function of ``policy.RULES`` runs on it.

Waivers, with a written reason, work as offline: ``policy.waivers`` in the stack file, or
this pack's own config (``pulumi preview --policy-pack-config FILE`` with
``{"<rule>": {"waiver": "<reason>"}}``). A waived finding is not reported as a violation.
Values unknown during a preview (an address not yet allocated) read as ``UNKNOWN``.

Secrets under the Pulumi CLI: the CLI starts the pack with the stack's config in
``PULUMI_CONFIG`` with every secret already decrypted, and passes no list of which keys
were secret: ``constructEnv`` sets ``PULUMI_CONFIG``, ``PULUMI_ORGANIZATION``,
``PULUMI_PROJECT``, ``PULUMI_STACK`` and ``PULUMI_DRY_RUN`` only, and ``constructConfig``
drops the secret keys ``PropertyMapToConfig`` returns (pulumi/pulumi
sdk/go/common/resource/plugin/analyzer_plugin.go, config.go); pulumi-policy 1.21's
``ConfigureStack`` keeps only the stack's tags. So the pack reads the ``secure:`` markers
from the stack file itself: the CLI runs it in the pack's directory (``pwd :=
policyPackPath``), under the project whose ``Pulumi.yaml`` names the ``stackConfigDir`` of
``Pulumi.<PULUMI_STACK>.yaml``. Keys that file does not hold (ESC environments, ``--config``)
are not judged by ``plain-secret-config`` in the pack; the offline preview, which reads the
file, judges every key it holds. Without a stack file to read, the rule judges nothing in
the pack rather than fail every correctly encrypted secret.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from pulumi.runtime import config as runtime_config
from pulumi_policy import (EnforcementLevel, Policy, PolicyConfigSchema, ReportViolation,
                           StackValidationArgs, StackValidationPolicy)
from pulumi_policy.proxy import UnknownValueError

from infra.policy import rules as policy
from infra.config.secrets import decode_config_value
from infra.config.stack import ConfigError, StackConfig, parse

PACK_NAME = "accelstack"
NAMESPACE = "accelstack"
UNKNOWN = "[unknown]"
MIN_REASON = 10  # as for waivers in the stack file (infra/config/cluster.py)

DESCRIPTIONS = {
    "workload-identity": "Workload Identity on the cluster and the GKE metadata server on nodes.",
    "node-service-account": "Nodes never run as the default compute service account.",
    "shielded-nodes": "Shielded GKE nodes with secure boot.",
    "authorized-networks": "No public control-plane endpoint open to every address.",
    "deletion-protection": "A production stack's cluster has deletion protection.",
    "capacity-reservation": "Spot, flex-start and queued pools consume no reservation.",
    "image-latest-tag": "No cached image by the mutable 'latest' tag.",
    "required-labels": "The stack's required labels on every labelled resource.",
    "accelerator-auto-repair": "TPU and GPU node pools have node auto-repair on.",
    "plain-secret-config": "Credentials are never stored as plain stack config.",
    "public-bucket": "No Cloud Storage bucket or object is public.",
    "budget": "The stack's standing cost within its policy.budgetPerHour.",
}
WAIVER_SCHEMA = PolicyConfigSchema(
    properties={"waiver": {"type": "string", "minLength": MIN_REASON}})


def _plain(value: Any) -> Any:
    """A property tree of plain dicts and lists, unknown values replaced by ``UNKNOWN``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        out = {}
        for key in value:
            try:
                out[key] = _plain(value[key])
            except UnknownValueError:
                out[key] = UNKNOWN
        return out
    if isinstance(value, Sequence):
        items = []
        for i in range(len(value)):
            try:
                items.append(_plain(value[i]))
            except UnknownValueError:
                items.append(UNKNOWN)
        return items
    return value


def stack_config() -> tuple[StackConfig | None, list[policy.Item]]:
    """The parsed ``accelstack`` config (None if it does not parse) and every key as items."""
    env = {k: decode_config_value(v, k.partition(":")[2])
           for k, v in runtime_config.get_config_env().items()}
    raw = {}
    for key, value in env.items():
        ns, _, name = key.partition(":")
        if ns == NAMESPACE and name:
            raw[name] = value
    try:
        cfg: StackConfig | None = parse(raw)
    except ConfigError:
        cfg = None
    return cfg, policy.config_items(env, runtime_config.get_config_secret_keys_env(),
                                    written_config())


def written_config(start: Path | None = None,
                   stack: str | None = None) -> dict[str, Any]:
    """The ``config:`` mapping of the running stack's file as written (``secure:`` markers
    kept), found from the pack's directory up to the project's ``Pulumi.yaml``; empty when
    there is no such file to read."""
    name = (stack or os.environ.get("PULUMI_STACK") or "").rsplit("/", 1)[-1]
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        project = folder / "Pulumi.yaml"
        if not project.is_file():
            continue
        try:
            doc = yaml.safe_load(project.read_text(encoding="utf-8")) or {}
            config_dir = str(doc.get("stackConfigDir") or ".")
            text = (folder / config_dir / f"Pulumi.{name}.yaml").read_text(encoding="utf-8")
            config = (yaml.safe_load(text) or {}).get("config") or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError):
            return {}
        return dict(config) if name and isinstance(config, Mapping) else {}
    return {}


def _validator(rule: str) -> Callable[[StackValidationArgs, ReportViolation], None]:
    check = policy.RULES[rule]

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        cfg, items = stack_config()
        if cfg is None:
            report_violation("the stack config does not parse; run `accelstack-preview "
                             "STACK` for the problems", None)
            return
        urns = {}
        for r in args.resources:
            items.append(policy.Item(r.resource_type, r.name, _plain(r.props)))
            urns[f"{r.resource_type} {r.name}"] = r.urn
        reason = str(args.get_config().get("waiver") or "").strip()
        if len(reason) < MIN_REASON:
            reason = cfg.policy.waivers.get(rule, "")
        if reason:
            return
        for f in check(cfg, items):
            report_violation(f"{f.resource}: {f.message}; fix: {f.fix}", urns.get(f.resource))

    return validate


def policies() -> list[Policy]:
    """One mandatory stack policy per rule of ``infra.policy.rules``, named after the rule."""
    return [StackValidationPolicy(name=rule, description=DESCRIPTIONS[rule],
                                  enforcement_level=EnforcementLevel.MANDATORY,
                                  config_schema=WAIVER_SCHEMA, validate=_validator(rule))
            for rule in policy.RULES]
