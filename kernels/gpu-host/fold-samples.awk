# Folds the task threads' samples that `jfr print --events EVENT --stack-depth 64` prints into
# one "frame;frame;..." line a sample, leaf first, 24 frames deep, methods without arguments
# (pipe through sort | uniq -c | sort -rn to count them). awk -v ev=EVENT -f fold-samples.awk
$1 == ev { inS = 1; st = ""; th = ""; n = 0; next }
inS && /sampledThread/ { th = $0 }
inS && /stackTrace = \[/ { inT = 1; next }
inT && /^[ \t]*\]/ { inT = 0; next }
inT { if (n < 24) { f = $1; sub(/\(.*/, "", f); st = (n == 0 ? f : st ";" f); n++ } }
inS && /^}/ { if (th ~ /Executor task launch/) print st; inS = 0 }
