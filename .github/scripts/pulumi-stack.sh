#!/usr/bin/env bash
# One stack's `pulumi preview`, saved plan or `pulumi up --plan`, as the infra workflow runs
# them, with the policy pack enforced and the output in the job summary.
#   preview  refresh + preview (pull requests)
#   plan     refresh + preview saved as an update plan, plan.json (push to main)
#   up       refresh + up constrained to plan.json (the approved deploy)
#   replacements  refresh + `pulumi preview --json`: what the change replaces or deletes
#            (python -m infra.replacements pulumi-json), the workloads running there
#            (submit cluster at-risk; an unreachable cluster is said so), written to the
#            summary before anything else; exit 3 when it replaces or deletes an
#            accelerator pool that the stack file's allowReplace does not allow
#            (docs/review.md, "What a change destroys").
# Update plans: https://www.pulumi.com/docs/iac/operations/stack-management/update-plans/
# (`pulumi preview --save-plan`, `pulumi up --plan`; an up that would do anything the plan
# does not list fails). The refresh runs in both so the plan and the up see the same state.
# Env: STACK (stacks/Pulumi.<STACK>.yaml); PULUMI_ORG for Pulumi Cloud (org/stack);
# PULUMI_BACKEND_URL for a self-managed backend; PULUMI_ACCESS_TOKEN or
# PULUMI_CONFIG_PASSPHRASE as the backend needs.
set -euo pipefail
cmd=${1:?usage: pulumi-stack.sh preview|plan|up|replacements}
: "${STACK:?STACK: the stack, as in stacks/Pulumi.<STACK>.yaml}"
# Pulumi Cloud names a stack org/stack; its config file is still Pulumi.<stack>.yaml.
ref="${PULUMI_ORG:+${PULUMI_ORG}/}${STACK}"
# An unset repository variable arrives as an empty string: leave the CLI's defaults alone.
for var in PULUMI_BACKEND_URL PULUMI_ACCESS_TOKEN PULUMI_CONFIG_PASSPHRASE; do
  [ -n "${!var:-}" ] || unset "$var"
done
args=(--stack "$ref" --non-interactive --color never --refresh --diff
      --policy-pack infra/policy/pack)
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
if [ "$cmd" = replacements ]; then
  python=${PYTHON:-.venv/bin/python}
  submit=${SUBMIT:-.venv/bin/submit}
  dest="destroys-${STACK}.json"
  pulumi preview --stack "$ref" --non-interactive --refresh --json > "$out" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "## What the change destroys: ${ref}: pulumi preview --json failed (exit ${rc})" >> "$summary"
    exit "$rc"
  fi
  "$python" -m infra.replacements pulumi-json "$out" --stack "$STACK" \
    --stack-file "stacks/Pulumi.${STACK}.yaml" --out "$dest" || rc=$?
  if [ -f "$dest" ]; then
    # The workloads on the pools it destroys; a cluster out of reach is written as such.
    "$submit" cluster at-risk --stack "$ref" --replacements "$dest" || true
    "$python" -m infra.replacements show "$dest" >> "$summary"
  fi
  exit "$rc"
fi
case "$cmd" in
  preview) pulumi preview "${args[@]}" > "$out" 2>&1 || rc=$? ;;
  plan) pulumi preview "${args[@]}" --save-plan plan.json > "$out" 2>&1 || rc=$? ;;
  up) pulumi up "${args[@]}" --yes --plan plan.json > "$out" 2>&1 || rc=$? ;;
  *) echo "pulumi-stack.sh: unknown command '$cmd' (preview, plan, up, replacements)" >&2
     exit 2 ;;
esac
cat "$out"
{
  echo "## pulumi ${cmd}: ${ref} (exit ${rc})"
  echo '```diff'
  cat "$out"
  echo '```'
} >> "$summary"
exit "$rc"
