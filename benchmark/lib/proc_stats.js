'use strict';
// /proc accounting of the server and the machine: CPU ticks, page faults,
// syscalls, RSS, machine-wide busy time.

const fs = require('node:fs');

function readProcStat(pid) {
  // Fields after "(comm)": state is field 3; minflt 10, majflt 12, utime 14,
  // stime 15 (1-based, as in proc(5)).
  const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  const minflt = Number(rest[10 - 3]);
  const majflt = Number(rest[12 - 3]);
  return { utime, stime, ticks: utime + stime, faults: minflt + majflt };
}

function readProcIo(pid) {
  try {
    const out = {};
    for (const line of fs.readFileSync(`/proc/${pid}/io`, 'utf8').split('\n')) {
      const m = /^(\w+):\s+(\d+)/.exec(line);
      if (m) out[m[1]] = Number(m[2]);
    }
    return out;
  } catch {
    return null; // not readable (permissions, or kernel without task io accounting)
  }
}

function readProcStatus(pid) {
  const out = {};
  for (const line of fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const m = /^(\w+):\s+(\d+)\s*kB/.exec(line);
    if (m) out[m[1]] = Number(m[2]) * 1024;
  }
  return out;
}

// Busy time of the whole machine (all CPUs), in clock ticks: user + nice +
// system from /proc/stat's "cpu" line (irq/softirq left out: with irq time
// accounting they belong to nobody in particular). Other sessions on the same
// machine may live in other PID namespaces, invisible to ps but not to this:
// busy time minus the server's and the load generator's own is "other" load.
function readMachineBusy() {
  try {
    const line = fs.readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith('cpu '));
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    return f[0] + f[1] + f[2];
  } catch {
    return NaN;
  }
}

// Reset VmHWM (peak RSS) of a process: "5" > /proc/PID/clear_refs (Linux 4.0+).
function resetPeakRss(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function snapshot(pid) {
  const stat = readProcStat(pid);
  const io = readProcIo(pid);
  return {
    time: process.hrtime.bigint(),
    ticks: stat.ticks,
    faults: stat.faults,
    machineBusy: readMachineBusy(),
    syscw: io ? io.syscw : null,
    syscr: io ? io.syscr : null,
  };
}

module.exports = { readProcStat, readProcIo, readProcStatus, readMachineBusy, resetPeakRss, snapshot };
