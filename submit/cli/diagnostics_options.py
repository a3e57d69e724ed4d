"""The diagnostics options of `submit workload create` (and `run-local`, `experiment`
through it): declared here, listed in create_options.py, checked and rendered by
submit/render/diagnostics/ (docs/diagnostics.md).
"""

from __future__ import annotations

import click

DIAGNOSTIC_OPTIONS = [
    click.option("--stack-traces", is_flag=True,
                 help="Ship the Python stack traces cloud-tpu-diagnostics writes to "
                      "/tmp/debugging to Cloud Logging, through a sidecar in every pod."),
    click.option("--xla-dump", metavar="STORE[:PATH]",
                 help="Dump XLA's compiler passes (XLA_FLAGS --xla_dump_to) and upload them "
                      "to PATH of a store the namespace may write, one folder per host, even "
                      "when the job fails  [default PATH: xla-dumps/<workload>]."),
    click.option("--tensorboard", metavar="STORE[:PATH]",
                 help="Write TensorBoard logs to gs://BUCKET/PATH/<workload> of a Cloud Storage "
                      "store the namespace may write: $TENSORBOARD_LOG_DIR and "
                      "$AIP_TENSORBOARD_LOG_DIR  [default PATH: tensorboard]."),
    click.option("--debug-logs", is_flag=True,
                 help="libtpu's most verbose logs (TPU_STDERR_LOG_LEVEL, TPU_MIN_LOG_LEVEL, "
                      "TF_CPP_MIN_LOG_LEVEL, TPU_VMODULE; docs/diagnostics.md)."),
    click.option("--ml-diagnostics", is_flag=True,
                 help="Label the JobSet managed-mldiagnostics-gke=true so ML Diagnostics' "
                      "injection webhook gives its pods the metadata the "
                      "google-cloud-mldiagnostics SDK reads (stacks with mlDiagnostics)."),
]
