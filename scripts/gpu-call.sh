#!/usr/bin/env bash
# One device call of this session's Triton work: tune, GPU tests, bench, sanitizer; logs packed
# after each step into $OUT/run.tgz (a call cut short still returns what finished).
set -uo pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=$PWD/.cache/triton PHASE24_CACHE=$PWD/.cache/phase24
w=$OUT/w; mkdir -p $w
pack() { tar czf $OUT/run.tgz -C $OUT w; }
lim() { echo $(( ${1} - SECONDS > 10 ? ${1} - SECONDS : 10 )); }
(for f in src/phase24/kernels/softmax_v*.cu; do python3 -c "import sys; from phase24.bridge.nvcc import compile_cu; compile_cu(sys.argv[1], 'sm_90a')" $f & done; wait; echo built) > $w/build.log 2>&1 &
timeout 160 python3 scripts/tune_triton.py $w/tune-triton.json > $w/tune-triton.log 2>&1 && cp $w/tune-triton_best.json src/phase24/softmax/triton_configs.json; pack
timeout $(lim 330) python3 -m pytest -v -p no:cacheprovider -rfEs tests/test_triton_gpu.py > $w/tests.log 2>&1; pack
wait
timeout $(lim 520) python3 -m phase24 bench softmax --impl torch cuda triton-naive triton-v1 triton-v2 triton-v3 triton-v4 triton-v5 triton --out $w/bench > $w/bench.log 2>&1; pack
for t in memcheck synccheck racecheck; do timeout $(lim 585) compute-sanitizer --error-exitcode 9 --report-api-errors no --tool $t python3 scripts/sanitize_softmax.py --triton > $w/san-$t.log 2>&1; echo "$t rc=$?" >> $w/san.txt; pack; done
tail -3 $w/tests.log; tail -40 $w/bench.log; cat $w/san.txt; grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|sanitize_softmax" $w/san-*.log
