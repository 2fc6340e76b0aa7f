import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time spent between two snapshots: by this process (client, Switchboard's server and worker,
 * fake APIs, all in one), by its child processes by name (the Temporal dev server), and how busy
 * the whole machine was. Child and machine figures come from /proc and are absent elsewhere.
 */

/** Linux's USER_HZ: /proc times are in hundredths of a second on every common kernel. */
const TICK_MS = 10;

export interface CpuSnapshot {
  self: NodeJS.CpuUsage;
  children: Map<string, number>;
  machine?: { busy: number; total: number };
}

export interface CpuUsed {
  selfMs: number;
  /** CPU ms of child processes, by command name. */
  childrenMs: Record<string, number>;
  /** Share of all cores busy (any process), 0–1. */
  machineBusy?: number;
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** utime + stime in ms of every direct child process, summed by command name. */
function childrenCpu(): Map<string, number> {
  const byName = new Map<string, number>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return byName;
  }
  for (const pid of pids) {
    const stat = readProc(`/proc/${pid}/stat`);
    if (!stat) continue;
    // "pid (comm) state ppid …": comm may hold spaces, so split after its closing parenthesis.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) !== process.pid) continue;
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    byName.set(name, (byName.get(name) ?? 0) + ms);
  }
  return byName;
}

function machineCpu(): CpuSnapshot['machine'] {
  const line = readProc('/proc/stat')?.split('\n')[0];
  if (!line?.startsWith('cpu ')) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, total };
}

export function cpuSnapshot(): CpuSnapshot {
  return { self: process.cpuUsage(), children: childrenCpu(), machine: machineCpu() };
}

export function cpuSince(start: CpuSnapshot): CpuUsed {
  const now = cpuSnapshot();
  const self = process.cpuUsage(start.self);
  const childrenMs: Record<string, number> = {};
  for (const [name, ms] of now.children) childrenMs[name] = ms - (start.children.get(name) ?? 0);
  const machineBusy =
    now.machine && start.machine ? (now.machine.busy - start.machine.busy) / (now.machine.total - start.machine.total) : undefined;
  return { selfMs: (self.user + self.system) / 1000, childrenMs, machineBusy };
}
