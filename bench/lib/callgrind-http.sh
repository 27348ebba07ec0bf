#!/bin/bash
# Instructions per request of one server of bench/lib/servers.ts over real HTTP, under callgrind
# (counts do not depend on machine load, unlike rates and CPU time). Collects only in the measured
# window: WARM requests first, then N requests (autocannon, 10 connections), all threads.
#   bench/lib/callgrind-http.sh bare /ping
#   DATA_DIR=$(mktemp -d) bench/lib/callgrind-http.sh gated /api/v0/ping
#   DATA_DIR=$(mktemp -d) DATABASE_URL='postgres://…/db?schema=t_cg' bench/lib/callgrind-http.sh gated /api/v0/ping
# Prints instructions per request: total, V8 GC (marking, sweeping, scavenging, heap pages), and
# the rest. Compare servers by running this for each (start-up takes minutes under valgrind).
# The background loops are off (RUN_WORKER=false unless set): under valgrind a window lasts minutes,
# and their cost per second of wall time (about 1.2 M instructions/s on SQLite at rest) would be
# counted against the requests; at full speed it is spread over tens of thousands of requests.
set -u
kind=$1 path=$2
n=${N:-3000} warm=${WARM:-2000}
cd "$(dirname "$0")/../.."
export PATH=$PWD/node_modules/.bin:$PATH
out=$(mktemp -d)
RUN_WORKER=${RUN_WORKER:-false} LOG_LEVEL=silent valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/cg.out" \
  node bench/lib/servers.ts "$kind" >"$out/srv.log" 2>"$out/vg.log" &
vp=$!
until grep -q READY "$out/srv.log"; do sleep 1; done
read -r _ port key <"$out/srv.log"
h=()
[ -n "${key:-}" ] && h=(-H "x-api-key=$key")
autocannon -c 10 -a "$warm" "${h[@]}" "http://127.0.0.1:$port$path" >/dev/null 2>&1
callgrind_control -i on $vp >/dev/null
autocannon -c 10 -a "$n" "${h[@]}" "http://127.0.0.1:$port$path" >"$out/run.log" 2>&1
callgrind_control -i off $vp >/dev/null
callgrind_control -d $vp >/dev/null
kill -INT $vp
wait $vp
grep -E 'requests in|errors' "$out/run.log"
callgrind_annotate --inclusive=no --threshold=100 "$out"/cg.out.1 2>/dev/null | awk -v n="$n" -v what="$kind $path" '
/PROGRAM TOTALS/ { v = $1; gsub(",", "", v); tot = v }
/^ *[0-9,]+ \(/ && !/PROGRAM TOTALS/ {
  v = $1; gsub(",", "", v)
  if ($0 ~ /Marking|Sweep|Scaveng|MarkCompact|heap::base|HeapObject::SizeFromMap|BodyDescriptor|IterateObjectCache|popcount|Evacuat|RememberedSet|SlotSet|MemoryAllocator|ActiveSystemPages|GCTracer|Heap::|Worklist|VisitPointers|RelocIterator|NeedsResetDueToFlushedBytecode|MinorMS|Unmapper/) gc += v
}
END { printf "%s: %.0f k instructions/request (GC %.0f k, without GC %.0f k)\n", what, tot / n / 1000, gc / n / 1000, (tot - gc) / n / 1000 }'
echo "callgrind output: $out"
