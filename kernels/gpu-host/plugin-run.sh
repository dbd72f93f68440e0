#!/usr/bin/env bash
# On the GPU host: the Spark plugin on a standalone cluster whose worker finds the GPU with
# conf/gpu-discovery.sh. One master and one worker (each its own JVM, on 127.0.0.1), started from
# the bundle made by `bundle.sh --spark`; io.gpusort.examples.ClusterCheck submitted through
# SparkSubmit with the plugin, Kryo with registration required, one GPU for the executor and
# spark.gpusort.engine=ENGINE. Checks that the job passed, that the executor was given the GPU and
# opened ENGINE on it, and that its metrics count rows sorted on the GPU and no fallback.
#
#   kernels/gpu-host/plugin-run.sh OUTDIR [ENGINE (cuda)] [ROWS (4000000)]
#
# Logs under OUTDIR: discovery.txt, master.log, worker.log, submit.log, executor.txt. Exit 0 when
# every check held. Run it outside the bundle's environment: it wraps itself in host.sh run.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${GPUSORT_PLUGIN_RUN:-}" ]; then
  host_sh=$(ls "$repo"/.gpu-bundle/part-*/host.sh 2>/dev/null | head -n 1)
  [ -n "$host_sh" ] || { echo "no .gpu-bundle/part-*/host.sh: carry a part of bundle.sh --spark" >&2; exit 2; }
  GPUSORT_PLUGIN_RUN=1 exec bash "$host_sh" run -- bash "$0" "$@"
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
engine=${2:-cuda}
rows=${3:-4000000}
app_jar=$(tr : '\n' <<< "$CLASSPATH" | grep -E 'original-spark-gpusort-examples_[^/]*\.jar$' | head -n 1)
[ -n "$app_jar" ] || { echo "the bundle has no examples jar: make it with bundle.sh --spark" >&2; exit 2; }

work=$(mktemp -d /tmp/gpusort-cluster.XXXXXX)
home=$work/spark-home
mkdir -p "$home/jars" "$home/conf" "$work/executors"
echo "Spark (from the gpu-host bundle)" > "$home/RELEASE"
cp "$repo/conf/log4j2.properties.template" "$home/conf/log4j2.properties"
# Executors get the bundle's classpath the way a Hadoop-free Spark gets Hadoop's: SPARK_DIST_CLASSPATH.
export SPARK_HOME=$home SPARK_CONF_DIR=$home/conf SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP=127.0.0.1
export SPARK_DIST_CLASSPATH=$CLASSPATH
# Every JVM here, executors included, logs through conf/'s template (the bundle also holds the core's
# log4j2-test.properties, which log4j would otherwise prefer).
export JDK_JAVA_OPTIONS="$JDK_JAVA_OPTIONS -Dlog4j2.configurationFile=$home/conf/log4j2.properties"
cp_java="$home/conf:$CLASSPATH"
# Spark 4 adds --add-modules=jdk.incubator.vector to every executor's command, and the bundle's
# jlink'd JRE has no such module: the worker launches executors through this java, which drops it.
mkdir -p "$work/java/bin"
cat > "$work/java/bin/java" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do [ "\$a" = --add-modules=jdk.incubator.vector ] || args+=("\$a"); done
exec "$JAVA_HOME/bin/java" "\${args[@]}"
EOF
chmod +x "$work/java/bin/java"

bash "$repo/conf/gpu-discovery.sh" > "$out/discovery.txt" 2>&1
echo "discovery script: $(cat "$out/discovery.txt")"
gpus=$(grep -o '"addresses": *\[[^]]*\]' "$out/discovery.txt")
[ "$gpus" != '"addresses": []' ] || echo "no GPU discovered: the executor will get none"
cat > "$work/worker.conf" <<EOF
spark.worker.resource.gpu.amount 1
spark.worker.resource.gpu.discoveryScript $repo/conf/gpu-discovery.sh
EOF

pids=()
trap 'kill "${pids[@]}" 2>/dev/null; sleep 1; kill -9 "${pids[@]}" 2>/dev/null' EXIT
java -Xmx1g -cp "$cp_java" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 7177 \
  --webui-port 8180 > "$out/master.log" 2>&1 &
pids+=($!)
JAVA_HOME=$work/java java -Xmx1g -cp "$cp_java" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --webui-port 8181 \
  --cores 8 --memory 40g --work-dir "$work/executors" --properties-file "$work/worker.conf" \
  spark://127.0.0.1:7177 > "$out/worker.log" 2>&1 &
pids+=($!)
for _ in $(seq 120); do
  grep -q "Successfully registered with master" "$out/worker.log" && break
  sleep 0.5
done
grep -q "Successfully registered with master" "$out/worker.log" \
  || { echo "the worker did not register:"; tail -20 "$out/worker.log"; exit 1; }
grep -E "Custom resources|gpu" "$out/worker.log" | head -3

java -Xmx8g -cp "$cp_java" org.apache.spark.deploy.SparkSubmit --master spark://127.0.0.1:7177 \
  --deploy-mode client --class io.gpusort.examples.ClusterCheck \
  --conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 \
  --conf spark.ui.enabled=false \
  --conf spark.plugins=io.gpusort.spark.GpuSortPlugin --conf spark.gpusort.engine="$engine" \
  --conf spark.serializer=org.apache.spark.serializer.KryoSerializer \
  --conf spark.kryo.registrationRequired=true \
  --conf spark.kryo.registrator=io.gpusort.spark.GpuSortKryoRegistrator \
  --conf spark.executor.cores=8 --conf spark.cores.max=8 --conf spark.executor.memory=24g \
  --conf spark.executor.resource.gpu.amount=1 --conf spark.task.resource.gpu.amount=0.125 \
  --conf spark.scheduler.minRegisteredResourcesRatio=1.0 --conf spark.locality.wait=0 \
  --conf spark.metrics.conf.executor.sink.console.class=org.apache.spark.metrics.sink.ConsoleSink \
  --conf spark.metrics.conf.executor.sink.console.period=1 \
  --conf spark.metrics.conf.executor.sink.console.unit=seconds \
  "$app_jar" "$out/cluster-output" "$rows" 1 > "$out/submit.log" 2>&1
status=$?
echo "submit exit $status"
# The executor's stdout (metrics) and stderr (log), as the worker kept them.
for f in "$work"/executors/app-*/*/stderr "$work"/executors/app-*/*/stdout; do
  [ -f "$f" ] && { echo "=== $f"; cat "$f"; }
done > "$out/executor.txt" 2>&1

failed=0
check() { # description, command...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failed=1; fi
}
check "ClusterCheck passed" grep -q "CLUSTER CHECK OK" "$out/submit.log"
grep -h "CLUSTER CHECK OK\|Exception\|Error" "$out/submit.log" | head -5
check "the executor opened $engine" grep -qE "executor [0-9]+ sorts on $engine" "$out/executor.txt"
grep -h "spark-gpusort: executor" "$out/executor.txt" | head -3
check "the driver got the executor's report, with its GPU address" \
  grep -qE "executor [0-9]+ on .* sorts on $engine.* \(GPU [0-9]+\)" "$out/submit.log"
grep -h "GpuSortPlugin" "$out/submit.log" | head -3
# The last console report of the plugin's gauges (value = N lines under each gauge's name).
gauge() { awk -v g="GpuSortPlugin.$1" '$0 ~ g"$" {getline; sub(/.*value = /, ""); v = $0} END {print v + 0}' "$out/executor.txt"; }
rows_sorted=$(gauge rowsSorted); gpu_rows=$(gauge rowsSortedOnGpu); fallbacks=$(gauge engineFallbacks)
to_device=$(gauge bytesToDevice)
echo "executor gauges: rowsSorted=$rows_sorted rowsSortedOnGpu=$gpu_rows engineFallbacks=$fallbacks bytesToDevice=$to_device"
if [ "$engine" != cpu ]; then
  check "rows were sorted on the GPU" test "$gpu_rows" -gt 0
  check "every row sorted went to the GPU" test "$gpu_rows" -eq "$rows_sorted"
  check "bytes went to the device" test "$to_device" -gt 0
else
  check "rows were sorted" test "$rows_sorted" -gt 0
fi
check "no engine fell back" test "$fallbacks" -eq 0
exit $((status != 0 || failed))
