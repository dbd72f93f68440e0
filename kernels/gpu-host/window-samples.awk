# Splits the task threads' samples that `jfr print --events EVENT --stack-depth 64` prints by the
# runs SortBenchmark names in its log ("window CASE | RUN | from HH:MM:SS.mmm to HH:MM:SS.mmm")
# or TeraBenchmark in its ("run N CASE: ... from HH:MM:SS.mmm to HH:MM:SS.mmm"), one
# "RUN-LABEL<TAB>EVENT<TAB>frame;frame;..." line a sample, leaf first, 24 frames deep (pipe
# through sort | uniq -c to count them). awk -v ev=EVENT -f window-samples.awk LOG -
# -v threads=REGEX takes the threads whose sampledThread line matches it instead (the driver's:
# '"main"|dag-scheduler'); the thread's name then leads the stack.
FNR == NR {
  if ($1 == "run") {
    n++
    name[n] = substr($0, 5)
    sub(/:.*/, "", name[n])
    from[n] = $(NF - 2)
    to[n] = $NF
  } else if ($1 == "window") {
    n++
    line = substr($0, 8)
    split(line, part, " \\| ")
    name[n] = part[1] " | " part[2]
    from[n] = $(NF - 2)
    to[n] = $NF
  }
  next
}
$1 == ev { inS = 1; st = ""; th = ""; t = ""; k = 0; next }
inS && /startTime/ { t = $3 }
inS && /sampledThread/ { th = $0 }
inS && /stackTrace = \[/ { inT = 1; next }
inT && /^[ \t]*\]/ { inT = 0; next }
inT { if (k < 24) { f = $1; sub(/\(.*/, "", f); st = (k == 0 ? f : st ";" f); k++ } }
inS && /^}/ {
  inS = 0
  if (threads == "" && th !~ /Executor task launch/) next
  if (threads != "") {
    if (th !~ threads) next
    name_of = th; sub(/^[^"]*"/, "", name_of); sub(/".*/, "", name_of); st = name_of ";" st
  }
  for (i = 1; i <= n; i++) if (t >= from[i] && t <= to[i]) print name[i] "\t" ev "\t" st
}
