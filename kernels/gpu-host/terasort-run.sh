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
# settings=profile, into OUTDIR/terasort-HEAP.jfr).
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
[ "${JFR:-0}" = 1 ] && jfr_opt="-XX:StartFlightRecording=filename=$out/$label.jfr,settings=profile"
[ -n "${DIR:-}" ] && dir_arg="--dir $DIR"
start=$(date +%s)
bash "$host_sh" run -- bash -c "java -Xmx$heap $jfr_opt ${JAVA_OPTS:-} -cp \"\${CLASSPATH}\" \
  io.gpusort.examples.TeraBenchmark --engine cuda --master '${MASTER:-local[16]}' \
  --rows ${ROWS:-100000000} --reps ${REPS:-1} --warmups ${WARMUPS:-0} $dir_arg ${ARGS:-}" \
  > "$out/$label.txt" 2>&1
rc=$?
echo "TeraBenchmark heap $heap exit $rc after $(( $(date +%s) - start )) s"
grep -E "^(TeraBenchmark|heap|generated|case|read|FileSort|ratio)" "$out/$label.txt"
[ $rc = 0 ] || tail -n 30 "$out/$label.txt"
exit $rc
