#!/bin/bash
# Does racecheck stall on a multithreaded program that uses none of the module's code?
L=/tmp/pl; rm -rf $L; mkdir -p $L
P=.devcarry-run/racecheck_probe
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
compute-sanitizer --version | tail -2 | tee -a $L/device.txt
which gdb cuda-gdb | tee -a $L/device.txt
( time $P 8 200 65536 noscan ) > $L/plain.log 2>&1; echo "plain rc $?: $(cat $L/plain.log | tr "\n" " ")"
run() { # name limit args...
  local name=$1 lim=$2; shift 2
  local s=$(date +%s)
  compute-sanitizer --tool racecheck --error-exitcode 3 "$@" > $L/$name.log 2>&1 &
  local pid=$!
  while kill -0 $pid 2>/dev/null && [ $(( $(date +%s) - s )) -lt $lim ]; do sleep 1; done
  if kill -0 $pid 2>/dev/null; then
    local app=$(pgrep -P $(pgrep -P $pid | head -1) | head -1); echo "app $app: $(cat /proc/$app/cmdline 2>/dev/null | tr '\0' ' ')" > $L/$name-app.txt
    [ -n "$app" ] && timeout 60 cuda-gdb -p $app -batch -ex "info cuda kernels" -ex "thread apply all bt 14" > $L/$name-stacks.txt 2>&1; ps -L -o pid,lwp,pcpu,stat,wchan:30,comm -p $app >> $L/$name-app.txt
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader >> $L/$name-stacks.txt
    pkill -9 -f compute-sanitizer; pkill -9 -f racecheck_probe; wait $pid; echo "$name: STALLED (killed at $lim s)" | tee -a $L/summary.txt
  else
    wait $pid; local rc=$?
    echo "$name: rc $rc in $(( $(date +%s) - s )) s: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|wrong results' $L/$name.log | tr '\n' ' ')" | tee -a $L/summary.txt
  fi
}
for i in; do run race-1thread-$i 30 $P 1 20 65536 noscan; done
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do run race-noevent-$i 30 $P 8 20 65536 noscan noevent; grep -q "noevent.*STALLED" $L/summary.txt && break; done
for i in 1 2 3 4 5 6 7 8 9 10; do run race-noscan-$i 30 $P 8 20 65536 noscan; grep -q "noscan.*STALLED" $L/summary.txt && break; done
cp $L/summary.txt $L/summary.log
tar czf $OUT/logs.tar.gz -C $L .; cp $L/summary.txt $OUT/
