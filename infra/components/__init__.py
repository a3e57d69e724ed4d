"""Pulumi components: thin ComponentResources that turn the pure specs (infra.specs) into
resources. The only layer besides program.py and the preview harness that imports pulumi.

May import: infra.components, infra.specs, infra.config, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: submit, kubernetes, click
"""

from __future__ import annotations

import pulumi


def child_options(parent: pulumi.Resource,
                  opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions:
    """Options for a component's children: parented to it, and waiting for what the
    component was told to wait for (a component's depends_on does not reach its children
    by itself)."""
    deps = opts.depends_on if opts is not None else None
    return pulumi.ResourceOptions(parent=parent, depends_on=deps)
