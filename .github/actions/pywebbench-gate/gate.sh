#!/usr/bin/env bash
# The pywebbench-gate action's step: base and head of the app in one run, judged at the threshold.
# Reads its inputs from PWB_* (action.yml); writes the JUnit XML and the summary beside the run,
# appends the summary to $GITHUB_STEP_SUMMARY when set, and exits with the gate's code.
set -uo pipefail
set -f  # a glob such as 'gunicorn-*' reaches pywebbench as written, never expanded here

: "${PWB_APP:?the app (MODULE:CALLABLE) is required}"
: "${PWB_BASE_REF:?the base ref is required}"
out=${PWB_OUT:-runs/gate}
junit="$out.junit.xml"
summary="$out.summary.md"
mkdir -p "$(dirname -- "$out")"

args=(app --app "$PWB_APP" --app-dir "${PWB_APP_DIR:-.}" --baseline-ref "$PWB_BASE_REF"
      --fail-on-regression "${PWB_THRESHOLD:-2%}" --budget "${PWB_BUDGET:-5m}" --out "$out"
      --junit "$junit" --summary "$summary")
while IFS= read -r request; do  # one --request per line, spaces kept
    [[ -n "${request//[[:space:]]/}" ]] && args+=(--request "$request")
done <<< "${PWB_REQUESTS:-}"
for server in ${PWB_SERVERS:-}; do  # names and globs, split on whitespace
    args+=(--server "$server")
done
# the two inputs that take a value with spaces in it, whole
[[ -n "${PWB_REQUIREMENTS:-}" ]] && args+=(--requirements "$PWB_REQUIREMENTS")
[[ -n "${PWB_SETUP:-}" ]] && args+=(--setup "$PWB_SETUP")
read -r -a extra <<< "${PWB_EXTRA_ARGS:-}"
args+=("${extra[@]}")

read -r -a command <<< "${PWB_COMMAND:-pywebbench}"
"${command[@]}" "${args[@]}"
code=$?

if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
    { echo "summary=$summary"; echo "junit=$junit"; } >> "$GITHUB_OUTPUT"
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$summary" ]]; then
    cat -- "$summary" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$code"
