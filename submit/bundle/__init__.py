"""Ship local code: a directory appended as one layer on a base image, pushed without Docker.

``plan`` computes the layer, config and manifest (pure, byte-reproducible); ``registry`` is
the one module that speaks the OCI distribution API; ``push`` carries a plan out. The
``--script-dir`` options live in submit/cli/bundle.py.

May import: submit.bundle, infra.catalog, infra.contract, infra.record, infra.lazy_re
Must not import: click, kubernetes, pulumi, submit.cli, submit.cluster, submit.render, submit.api
"""
