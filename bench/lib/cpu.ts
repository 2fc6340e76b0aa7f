import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time spent between two snapshots: by this process (client, Switchboard's server and worker,
 * fake APIs, all in one), by its child processes by name (the Temporal dev server `temporal`, or
 * the Temporal server `temporal-server`), by PostgreSQL's processes (every backend on the machine:
 * Temporal's and Switchboard's queries alike), and how busy the whole machine was. Child, Postgres
 * and machine figures come from /proc and are absent elsewhere.
 */

/** Linux's USER_HZ: /proc times are in hundredths of a second on every common kernel. */

const TICK_MS = 10;

export interface CpuSnapshot {
  self: NodeJS.CpuUsage;
  children: Map<string, number>;
  postgres: number;
  machine?: { busy: number; total: number };
}

export interface CpuUsed {
  selfMs: number;
  /** CPU ms of child processes, by command name. */
  childrenMs: Record<string, number>;
  /** CPU ms of every `postgres` process on the machine. */
  postgresMs: number;
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

/** utime + stime in ms of this process's direct children, summed by command name, and of every `postgres` process. */
function processesCpu(): { children: Map<string, number>; postgres: number } {
  const children = new Map<string, number>();
  let postgres = 0;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return { children, postgres };
  }
  for (const pid of pids) {
    const stat = readProc(`/proc/${pid}/stat`);
    if (!stat) continue;
    // "pid (comm) state ppid …": comm may hold spaces, so split after its closing parenthesis.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    if (name === 'postgres') postgres += ms;
    if (Number(fields[1]) === process.pid) children.set(name, (children.get(name) ?? 0) + ms);
  }
  return { children, postgres };
}

function machineCpu(): CpuSnapshot['machine'] {
  const line = readProc('/proc/stat')?.split('\n')[0];
  if (!line?.startsWith('cpu ')) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, total };
}

export function cpuSnapshot(): CpuSnapshot {
  return { self: process.cpuUsage(), ...processesCpu(), machine: machineCpu() };
}

export function cpuSince(start: CpuSnapshot): CpuUsed {
  const now = cpuSnapshot();
  const self = process.cpuUsage(start.self);
  const childrenMs: Record<string, number> = {};
  for (const [name, ms] of now.children) childrenMs[name] = ms - (start.children.get(name) ?? 0);
  const machineBusy =
    now.machine && start.machine ? (now.machine.busy - start.machine.busy) / (now.machine.total - start.machine.total) : undefined;
  // A backend that ended between the snapshots takes its time with it: never below zero.
  const postgresMs = Math.max(0, now.postgres - start.postgres);
  return { selfMs: (self.user + self.system) / 1000, childrenMs, postgresMs, machineBusy };
}

/** The Temporal server's CPU ms in `used`, whichever kind runs (the dev server, or the server on PostgreSQL). */
export const temporalCpuMs = (used: CpuUsed): number => (used.childrenMs.temporal ?? 0) + (used.childrenMs['temporal-server'] ?? 0);
