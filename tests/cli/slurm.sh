#!/bin/sh
# slurm.sh - lpipe batch on a real Slurm: a single-node cluster from Debian's
# packages (munged, slurmctld, slurmd) with its configuration, state, logs
# and munge key in the test's temporary folder, no cgroups and no system
# service. The script `lpipe batch --emit-sbatch` prints runs as a 4-task job
# array over 12 documents; `lpipe batch --merge` over the shards' outputs
# must list each document once. Every daemon started here is stopped by its
# pid on the way out; the waits are bounded, so that a hung cluster ends the
# test within 5 minutes. Skipped (77) when the packages are missing, when
# not root (slurmd starts jobs as their user), or when the cluster does not
# come up (the daemons' last errors are shown).
. "$top_srcdir/tests/cli/lib.sh"
. "$top_srcdir/tests/cli/shards.sh"

for prog in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel python3; do
	command -v "$prog" >/dev/null 2>&1 ||
		skip "$prog not found (Debian packages: munge slurmctld slurmd slurm-client)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root to start jobs"

S=$WORK/slurm
mkdir -p "$S/state" "$S/spool" "$S/log"
# munged refuses a socket in a folder that others cannot search.
chmod 755 "$WORK" "$S"
export SLURM_CONF="$S/slurm.conf"

MUNGED_PID=
CTLD_PID=
SLURMD_PID=
JOBS=

# stop PID: SIGTERM, then SIGKILL after 5 s; reaps it.
stop() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null || return 0
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

cleanup() {
	# A job still running when the test gave up: its steps are not our
	# children, so slurmctld must end them before the daemons go.
	[ -n "$JOBS" ] && timeout 10 scancel $JOBS 2>/dev/null
	stop "$SLURMD_PID"
	stop "$CTLD_PID"
	stop "$MUNGED_PID"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The daemons' last complaints, for a skip or a failure.
show_logs() {
	for f in "$S"/log/*; do
		grep -iE 'error|fatal' "$f" | grep -v -e pmix -e 'state file' -e 'Trying backup' |
			tail -n 5 | sed "s|^|  $(basename "$f"): |"
	done
}

# wait_until SECONDS COMMAND...: run COMMAND each second until it succeeds;
# fails once SECONDS have passed. The bounds only end a hung cluster: all
# of them together keep the test under 5 minutes.
wait_until() {
	end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 1
	done
}

# munge: its own key and socket, so no system munged is needed.
dd if=/dev/urandom of="$S/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$S/munge.key"
munged --foreground --key-file="$S/munge.key" --socket="$S/munge.sock" \
	--pid-file="$S/munged.pid" --seed-file="$S/munged.seed" \
	--log-file="$S/log/munged.log" >"$S/log/munged.out" 2>&1 &
MUNGED_PID=$!
munge_up() { [ -S "$S/munge.sock" ] || ! kill -0 "$MUNGED_PID" 2>/dev/null; }
wait_until 10 munge_up
if [ ! -S "$S/munge.sock" ]; then
	show_logs
	skip "munged did not start"
fi

# Two unused ports for the controller and the node daemon.
set -- $(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
host=$(hostname -s)
node=$(slurmd -C | sed -n 's/^\(NodeName=[^ ]*\).*/\1/p') # the name slurmd goes by
cat >"$SLURM_CONF" <<CONF
ClusterName=lpipetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge.sock
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
# 4 CPUs whatever the machine has: the --emit-sbatch script asks 2 per task.
SlurmdParameters=config_overrides
MinJobAge=600
$node CPUs=4 NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# In the foreground of a background job: $! is the daemon's own pid.
slurmctld -D -i -f "$SLURM_CONF" >"$S/log/slurmctld.out" 2>&1 &
CTLD_PID=$!
slurmd -D -f "$SLURM_CONF" >"$S/log/slurmd.out" 2>&1 &
SLURMD_PID=$!
node_idle() {
	[ "$(timeout 10 sinfo -h -N -o %T 2>/dev/null)" = idle ] ||
		! kill -0 "$CTLD_PID" 2>/dev/null || ! kill -0 "$SLURMD_PID" 2>/dev/null
}
wait_until 45 node_idle
if [ "$(timeout 10 sinfo -h -N -o %T 2>/dev/null)" != idle ]; then
	show_logs
	skip "the single-node Slurm did not come up (node: $(timeout 10 sinfo -h -N -o %T 2>&1))"
fi
ok "slurmctld and slurmd are up, the node is idle"

# submit ARGS...: sbatch; the job id in $job.
submit() {
	job=$(timeout 20 sbatch --parsable "$@" 2>"$ERR") || {
		sed 's/^/  sbatch: /' "$ERR"
		return 1
	}
	JOBS="$JOBS $job"
}

job_done() { [ -z "$(timeout 10 squeue -h -j "$job" 2>/dev/null)" ]; }

# job_ok JOB: every task of the array completed with exit status 0.
job_ok() {
	timeout 10 scontrol -o show job "$1" >"$S/state.txt" 2>&1
	n=$(grep -c 'JobState=COMPLETED .*ExitCode=0:0' "$S/state.txt")
	[ "$n" -eq 4 ] && [ "$(wc -l <"$S/state.txt")" -eq 4 ]
}

# 1. The cluster itself: each array task sees the variables a shard reads.
if submit --array=0-3 --output="$S/hello-%a.out" \
	--wrap 'echo "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT/$SLURM_ARRAY_TASK_MIN"'; then
	wait_until 45 job_done || fail "the array job $job still runs after 45 s"
	job_ok "$job" && ok "a 4-task array completes" || {
		fail "a 4-task array does not complete"
		sed 's/^/  /' "$S/state.txt"
	}
	got=$(cat "$S"/hello-0.out "$S"/hello-1.out "$S"/hello-2.out "$S"/hello-3.out 2>&1 | tr '\n' ' ')
	[ "$got" = "0/4/0 1/4/0 2/4/0 3/4/0 " ] && ok "array tasks see their id, count and min" ||
		fail "array tasks saw '$got'"
else
	fail "sbatch refuses a plain array job"
fi

need_batch

# 2. The script lpipe prints, submitted as it is: its #SBATCH lines make
# it a 4-task array and put the tasks' logs in the folder it was made in.
CORPUS=$WORK/corpus
corpus "$CORPUS"
cd "$WORK" || exit 1
lp batch "$PIPE" "$CORPUS" -o "$WORK/out" --emit-sbatch=4
expect "--emit-sbatch=4" 0
expect_out "--emit-sbatch=4 prints a script for a 4-task array" '#!/bin/sh' \
	'#SBATCH --array=0-3' ' batch '
cp "$OUT" "$WORK/job.sh"
if submit "$WORK/job.sh"; then
	wait_until 120 job_done || fail "the lpipe array $job still runs after 120 s"
	job_ok "$job" && ok "the --emit-sbatch script runs as a 4-task array" || {
		fail "the --emit-sbatch array does not complete"
		sed 's/^/  /' "$S/state.txt"
		sed 's/^/  task: /' "$WORK"/lpipe-batch-*.log | head -20
	}
else
	fail "sbatch refuses the --emit-sbatch script"
fi
[ "$(n_manifests "$WORK/out")" -eq 4 ] && ok "each task wrote its shard's manifest" ||
	fail "$(n_manifests "$WORK/out") shard manifests in the output folder, not 4"
if check_union "$CORPUS" "$WORK/out"; then ok "the shards hold every document once"; else
	fail "the shards do not hold every document once"
fi
check_merge "$WORK/out"
[ "$n_fail" -eq 0 ] || show_logs
finish
