# Phase timing for hack/test.sh and .ci/run (source it). Each phase prints its
# name and budget when it starts and its elapsed time when it ends. No phase
# ever fails on time: one that ran over its budget is flagged loudly when it
# ends, and phase_report, the closing summary, lists every phase that ran long
# and by how much. The budgets, and the measurements behind them, are in
# docs/development.md ("Time budget"); a phase over its budget is the place to
# look for what got slower.
#
#   phase_plan NAME BUDGET [NAME BUDGET ...]   the script's foreground phases and
#                                              their budgets in seconds
#   phase NAME COMMAND [ARGS...]               run a planned phase
#   phase_record NAME BUDGET SECONDS [CPU]     a row for time spent elsewhere
#                                              (in the background); not judged
#   phase_report                               the table and what ran long
#   cpu_ms VAR                                 CPU milliseconds (user + sys) of
#                                              the calling shell's finished
#                                              children, into VAR
#
# Each row also shows the CPU its processes used (user + sys): on a machine
# whose cores are busy for the whole run, only less work makes it shorter, and
# the CPU column says where the work is. A phase's CPU is that of what it ran
# (a background job's CPU is in the job's own row: phase_background).
#
# CI's one hard time rule lives here too, and only under .ci/run, which sets
# KDYN_RUN_LEDGER (a file) and KDYN_RUNCLOCK (where hack/runclock is built): every
# planned phase is written to the ledger, and after each one hack/runclock
# judges whether the run as a whole is on course to pass 75 minutes (CI kills
# it at 90); when it is, the run stops there, saying why (phase_clock writes the
# judgement to $KDYN_RUN_LEDGER.stopped for .ci/run's closing summary, and
# exits 3).
# KDYN_NO_BUDGET=1 prints that judgement without stopping (for a machine known
# to be slow). KDYN_PHASE_ROWS (a file), when set, collects the rows of every
# script of the run, so that .ci/run's closing summary covers make test's
# phases too.

# session_nice N: gives the calling shell's session the CPU priority of nice N
# (for a background job started with setsid). Where the kernel groups
# scheduling by session (CONFIG_SCHED_AUTOGROUP, on in most distributions'
# kernels), CPU time is shared between sessions first, so `nice` inside a new
# session lowers a job only against its own processes: a setsid job at nice 10
# still took as much CPU as the foreground (verify: 475 s instead of about 200
# on a fresh idle machine). The group's own nice is /proc/PID/autogroup; raising
# it needs no privilege (changes are rate-limited, hence the retries). Without
# autogroup there is nothing to do: nice works as it is.
session_nice() {
  local f=/proc/$$/autogroup i
  [ -w "$f" ] || return 0
  for i in 1 2 3 4 5; do
    if echo "$1" 2>/dev/null >"$f"; then return 0; fi
    sleep 0.2
  done
  return 0
}

declare -A PHASE_BUDGET=()
PHASE_ROWS=()
# The background jobs (PID -> the file where the job writes its own CPU
# milliseconds when it ends; phase_background). The shell counts a child's CPU
# when it reaps it, whichever phase is running then: a phase's row leaves out
# the jobs reaped during it, which have rows of their own.
declare -A PHASE_BG=()

# phase_background PID FILE: a background job of this shell; FILE is where it
# writes its CPU milliseconds (user + sys) before it ends.
phase_background() { PHASE_BG[$1]=$2; }

# _bg_reaped_ms VAR: the CPU milliseconds of the background jobs reaped so far
# (kill -0 still finds a child that ended and has not been reaped: its CPU is
# not counted yet either).
_bg_reaped_ms() {
  local pid sum=0
  for pid in "${!PHASE_BG[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null && [ -s "${PHASE_BG[$pid]}" ]; then
      sum=$((sum + $(cat "${PHASE_BG[$pid]}")))
    fi
  done
  printf -v "$1" '%s' "$sum"
}

# cpu_ms VAR: the CPU milliseconds (user + sys) of this shell's children that
# have ended and been waited for (bash's `times`, second line), into VAR. Not in
# a subshell: a forked shell starts with none.
cpu_ms() {
  local f u s
  f=$(mktemp)
  times >"$f"
  { read -r _ _ && read -r u s; } <"$f"
  rm -f "$f"
  printf -v "$1" '%s' $(($(_times_ms "$u") + $(_times_ms "$s")))
}
# _times_ms 1m2.345s -> 62345
_times_ms() {
  local t=${1%s} m sec
  m=${t%%m*}
  sec=${t#*m}
  local whole=${sec%%.*} frac=${sec#*.}000
  [ "$whole" != "$sec" ] || frac=000
  echo $((10#$m * 60000 + 10#$whole * 1000 + 10#${frac:0:3}))
}

phase_plan() {
  while [ $# -ge 2 ]; do
    PHASE_BUDGET[$1]=$2
    if [ -n "${KDYN_RUN_LEDGER:-}" ]; then printf 'plan\t%s\t%s\n' "$2" "$1" >>"$KDYN_RUN_LEDGER"; fi
    shift 2
  done
}

# _phase_row NAME SECONDS BUDGET STATUS [CPU-SECONDS]: one row of the report.
_phase_row() {
  PHASE_ROWS+=("$1"$'\t'"$2"$'\t'"$3"$'\t'"$4"$'\t'"${5:-}")
  if [ -n "${KDYN_PHASE_ROWS:-}" ]; then printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" >>"$KDYN_PHASE_ROWS"; fi
}

# _phase_over SECONDS BUDGET: "" when within the budget, else "+Ns (+P%)".
_phase_over() {
  [ "$1" -gt "$2" ] || return 0
  printf '+%ss (+%s%%)' $(($1 - $2)) $((($1 - $2) * 100 / $2))
}

_phase_end() { # NAME SECONDS BUDGET STATUS [CPU-SECONDS]
  local over
  over=$(_phase_over "$2" "$3")
  printf -- '-- %s: %ss (budget %ss%s) %s%s\n' "$1" "$2" "$3" "${5:+, CPU ${5}s}" "$4" "${over:+, OVER BUDGET: $over}"
  if [ -n "$over" ]; then
    printf '!! %s ran OVER BUDGET: %ss of %ss, %s. Not a failure; find what got slower (docs/development.md, "Time budget").\n' \
      "${1#"${1%%[! ]*}"}" "$2" "$3" "$over" >&2
  fi
}

phase() {
  local name=$1
  shift
  local budget=${PHASE_BUDGET[$name]:-}
  if [ -z "$budget" ]; then
    echo "phase.sh: phase '$name' has no budget (phase_plan)" >&2
    return 2
  fi
  local start=$SECONDS rc=0 cpu0 cpu1 bg0 bg1
  printf '\n== %s (budget %ss)\n' "$name" "$budget"
  _bg_reaped_ms bg0
  cpu_ms cpu0
  "$@" || rc=$?
  cpu_ms cpu1
  _bg_reaped_ms bg1
  local took=$((SECONDS - start)) status=ok cpu=$(((cpu1 - cpu0 - (bg1 - bg0) + 500) / 1000))
  [ "$cpu" -ge 0 ] || cpu=0
  [ "$rc" -eq 0 ] || status="failed (exit $rc)"
  _phase_row "$name" "$took" "$budget" "$status" "$cpu"
  _phase_end "$name" "$took" "$budget" "$status" "$cpu"
  if [ -n "${KDYN_RUN_LEDGER:-}" ]; then
    printf 'done\t%s\t%s\n' "$took" "$name" >>"$KDYN_RUN_LEDGER"
    phase_clock
  fi
  return "$rc"
}

# phase_clock: CI's time rule (see the top); exits the script when the run is
# on course to pass 75 minutes.
phase_clock() {
  local out rc=0
  if [ ! -x "$KDYN_RUNCLOCK" ]; then
    # In make test's build configuration (hack/test.sh), which compiled the
    # standard library by now.
    CGO_ENABLED=0 GOFLAGS=-trimpath go build -o "$KDYN_RUNCLOCK" ./hack/runclock || rc=2
  fi
  [ "$rc" -ne 0 ] || out=$("$KDYN_RUNCLOCK" -ledger "$KDYN_RUN_LEDGER") || rc=$?
  [ -z "$out" ] || echo "$out"
  case $rc in
    0) ;;
    1)
      if [ "${KDYN_NO_BUDGET:-}" = 1 ]; then
        echo "run clock: KDYN_NO_BUDGET=1: not stopping" >&2
        return 0
      fi
      echo "$out" >"$KDYN_RUN_LEDGER.stopped"
      echo "STOPPED on time: the run is on course to pass 75 minutes (see the run clock line above)." >&2
      exit 3
      ;;
    *)
      echo "run clock: cannot judge the run's time ($KDYN_RUNCLOCK exited $rc on $KDYN_RUN_LEDGER)" >&2
      exit 1
      ;;
  esac
}

phase_record() {
  local name=$1 budget=$2 took=$3 cpu=${4:-}
  _phase_row "$name" "$took" "$budget" ok "$cpu"
  _phase_end "$name" "$took" "$budget" ok "$cpu"
}

phase_report() {
  local rows=("${PHASE_ROWS[@]}")
  if [ -n "${KDYN_PHASE_ROWS:-}" ] && [ -s "$KDYN_PHASE_ROWS" ]; then mapfile -t rows <"$KDYN_PHASE_ROWS"; fi
  [ "${#rows[@]}" -gt 0 ] || return 0
  local row name took budget status cpu over long=()
  printf '\n%-41s %6s   %13s   %6s\n' phases: wall budget 'CPU (user + sys)'
  for row in "${rows[@]}"; do
    IFS=$'\t' read -r name took budget status cpu <<<"$row"
    over=$(_phase_over "$took" "$budget")
    printf '  %-38s %5ds   budget %5ds   %6s   %s%s\n' "$name" "$took" "$budget" "${cpu:+${cpu}s}" "$status" "${over:+   OVER BUDGET $over}"
    if [ -n "$over" ]; then long+=("$(printf '%s: %ss of %ss, %s' "${name#"${name%%[! ]*}"}" "$took" "$budget" "$over")"); fi
  done
  if [ "${#long[@]}" -eq 0 ]; then
    echo "time: every phase within its budget"
  else
    printf '!! time: %d phase(s) ran OVER BUDGET, which fails nothing; find what got slower (docs/development.md, "Time budget"):\n' "${#long[@]}"
    printf '!!   %s\n' "${long[@]}"
  fi
}
