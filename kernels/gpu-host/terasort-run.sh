#!/usr/bin/env bash
# On the GPU host, issue 17's TeraSort job end to end in one call: TeraBenchmark generates ROWS
# TeraSort records (1e8: 10 GB) into files, sorts them with FileSort --format terasort (GpuSort,
# engine cuda) and with Spark's read-orderBy-write of the same records, in turns, beside the floor
# (read and write, no sort), validates every output (order, count and the generator's checksum)
# and prints each case's time, ratio, spill and shuffle bytes. Needs the bundle made with
# --spark, every part staged. Writes logs under $1.
#
#   bash kernels/gpu-host/terasort-run.sh OUTDIR
#
# Environment: HEAP (the JVM's -Xmx: 8g caps memory so that both sorts spill; 80g leaves it
# uncapped), ROWS (100000000), REPS (1), WARMUPS (0), MASTER (local[16]), DIR (the records'
# directory, default under /tmp; it must not exist), ARGS (more TeraBenchmark arguments, such as
# --cases filesort), JAVA_OPTS (more JVM options), JFR (1: a flight recording of the whole run,
# settings=profile, into /tmp/terasort-HEAP.jfr, and the task threads' samples, Java and native,
# folded for each run's window into OUTDIR/terasort-HEAP-runs.txt: "run<TAB>event<TAB>count
# stack", leaf first, for comparing a slow run with a fast one).
set -uo pipefail
out=$1
mkdir -p "$out"
host_sh=$(ls .gpu-bundle/part-*/host.sh | tail -n 1)
heap=${HEAP:-8g}
label=terasort-$heap
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
df -h "${DIR:-/tmp}" 2>/dev/null | tail -n 1 | tee -a "$out/gpu.txt"
dir_arg=""
jfr_opt=""
[ "${JFR:-0}" = 1 ] && jfr_opt="-XX:StartFlightRecording=filename=/tmp/$label.jfr,settings=profile"
[ -n "${DIR:-}" ] && dir_arg="--dir $DIR"
start=$(date +%s)
bash "$host_sh" run -- bash -c "java -Xmx$heap $jfr_opt ${JAVA_OPTS:-} -cp \"\${CLASSPATH}\" \
  io.gpusort.examples.TeraBenchmark --engine cuda --master '${MASTER:-local[16]}' \
  --rows ${ROWS:-100000000} --reps ${REPS:-1} --warmups ${WARMUPS:-0} $dir_arg ${ARGS:-}" \
  > "$out/$label.txt" 2>&1
rc=$?
echo "TeraBenchmark heap $heap exit $rc after $(( $(date +%s) - start )) s"
grep -E "^(TeraBenchmark|heap|generated|run|case|read|FileSort|ratio)" "$out/$label.txt"
[ $rc = 0 ] || tail -n 30 "$out/$label.txt"
if [ "${JFR:-0}" = 1 ] && [ -f "/tmp/$label.jfr" ]; then
  for event in jdk.ExecutionSample jdk.NativeMethodSample; do
    bash "$host_sh" run -- jfr print --events "$event" --stack-depth 64 "/tmp/$label.jfr" \
      | awk -v ev="$event" -f "$(dirname "$0")/window-samples.awk" "$out/$label.txt" - \
      | sort | uniq -c | sort -k2,2 -k1,1rn > "/tmp/$label-$event.txt"
  done
  cat /tmp/$label-jdk.*.txt > "$out/$label-runs.txt"
  echo "$out/$label-runs.txt: $(wc -l < "$out/$label-runs.txt") stacks"
fi
exit $rc
