# Phase timing for hack/test.sh and .ci/run (source it). Each phase prints its
# name and budget when it starts and its elapsed time when it ends, and fails
# the run when it took more than 150 % of its budget, so a slow drift is caught
# long before CI's hard limit is met by surprise. phase_report prints the table
# of the phases so far (the scripts call it at the end, and on exit).
#
#   phase NAME BUDGET_SECONDS COMMAND [ARGS...]
#
# The budgets are written in docs/development.md ("Time budget"), with the
# measurements behind them. KDYN_NO_BUDGET=1 reports overruns without failing
# (for a deliberately slow machine).

PHASE_ROWS=()

phase() {
  local name=$1 budget=$2
  shift 2
  local start=$SECONDS rc=0
  printf '\n== %s (budget %ss)\n' "$name" "$budget"
  "$@" || rc=$?
  local took=$((SECONDS - start))
  local mark=ok
  [ "$rc" -ne 0 ] && mark="failed (exit $rc)"
  if [ "$rc" -eq 0 ] && [ $((took * 2)) -gt $((budget * 3)) ]; then
    mark="OVER BUDGET"
  fi
  PHASE_ROWS+=("$(printf '  %-34s %5ds   budget %5ds   %s' "$name" "$took" "$budget" "$mark")")
  printf -- '-- %s: %ss (budget %ss) %s\n' "$name" "$took" "$budget" "$mark"
  if [ "$rc" -ne 0 ]; then
    return "$rc"
  fi
  if [ "$mark" = "OVER BUDGET" ]; then
    printf '%s took %ss, more than 150%% of its %ss budget. Find what got slower before raising the budget\n' "$name" "$took" "$budget" >&2
    printf '(docs/development.md, "Time budget", says what each phase does and how it was measured).\n' >&2
    if [ "${KDYN_NO_BUDGET:-}" != 1 ]; then
      return 1
    fi
  fi
}

# phase_record NAME BUDGET SECONDS: a phase that ran elsewhere (in the background).
phase_record() {
  local name=$1 budget=$2 took=$3 mark=ok
  if [ $((took * 2)) -gt $((budget * 3)) ]; then mark="OVER BUDGET"; fi
  PHASE_ROWS+=("$(printf '  %-34s %5ds   budget %5ds   %s' "$name" "$took" "$budget" "$mark")")
  printf -- '-- %s: %ss (budget %ss) %s\n' "$name" "$took" "$budget" "$mark"
  if [ "$mark" = "OVER BUDGET" ] && [ "${KDYN_NO_BUDGET:-}" != 1 ]; then
    printf '%s took %ss, more than 150%% of its %ss budget (docs/development.md, "Time budget").\n' "$name" "$took" "$budget" >&2
    return 1
  fi
}

phase_report() {
  [ "${#PHASE_ROWS[@]}" -gt 0 ] || return 0
  printf '\nphases:\n'
  printf '%s\n' "${PHASE_ROWS[@]}"
}
