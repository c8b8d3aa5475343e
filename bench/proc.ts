// A server's figures from Linux's /proc, summed over the process and every process under it (a cluster's primary and
// its workers), so no server has to cooperate; null off Linux.
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat { pid: number; ppid: number; cpuTicks: number }

/** One /proc/<pid>/stat line: the command name (field 2) may hold spaces and parentheses, so fields count from its last ')'. */
export function parseStat(text: string): ProcStat {
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // After the name: state (3), ppid (4), …, utime (14), stime (15).
  return { pid: Number(text.slice(0, text.indexOf(' '))), ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
}

/** root and every process below it, root first. */
export function descendants(stats: ProcStat[], root: number): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  for (const s of stats) {
    const siblings = byParent.get(s.ppid);
    if (siblings) siblings.push(s);
    else byParent.set(s.ppid, [s]);
  }
  const self = stats.find((s) => s.pid === root);
  if (!self) return [];
  const out = [self];
  for (let i = 0; i < out.length; i++) out.push(...(byParent.get(out[i].pid) ?? []));
  return out;
}

/** CPU µs a tree used between two readings: a process there at both counts its difference, one that started in between all of its time; one that ended in between is lost (the kernel keeps no figure for it). */
export function cpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let us = 0;
  for (const [pid, t] of after) us += t - (before.get(pid) ?? 0);
  return us;
}

const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try { out.push(parseStat(readFileSync(`/proc/${name}/stat`, 'utf8'))); } catch { /* ended while we looked */ }
  }
  return out;
}

/** The pids of root's tree, root first; [] when root is gone or there is no /proc. */
export function treePids(root: number | undefined): number[] {
  if (root === undefined) return [];
  try { return descendants(allStats(), root).map((s) => s.pid); } catch { return []; }
}

/** CPU time (user + system) each process of root's tree has used so far, in µs; null when there is none to read. */
export function treeCpu(root: number | undefined): Map<number, number> | null {
  if (root === undefined) return null;
  try {
    const tree = descendants(allStats(), root);
    return tree.length ? new Map(tree.map((s) => [s.pid, (s.cpuTicks / CLOCK_TICKS) * 1e6])) : null;
  } catch {
    return null;
  }
}

/** A thread of a node process: its JavaScript thread (the one whose id is the process's), V8's helpers (GC, compiler), the rest. */
export type ThreadKind = 'main' | 'v8' | 'other';

export function threadKind(pid: number, tid: number, name: string): ThreadKind {
  if (tid === pid) return 'main';
  return /^V8 ?(Worker|DefaultWorke)/.test(name) ? 'v8' : 'other';
}

/** CPU time (user + system) each thread of root's tree has used so far, in µs, by thread id; null when there is none to read. */
export function treeThreadCpu(root: number | undefined): Map<number, { kind: ThreadKind; us: number }> | null {
  const out = new Map<number, { kind: ThreadKind; us: number }>();
  for (const pid of treePids(root)) {
    let tids: string[];
    try { tids = readdirSync(`/proc/${pid}/task`); } catch { continue; } // ended while we looked
    for (const tid of tids) {
      try {
        const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
        out.set(Number(tid), { kind: threadKind(pid, Number(tid), name), us: (parseStat(text).cpuTicks / CLOCK_TICKS) * 1e6 });
      } catch { /* ended while we looked */ }
    }
  }
  return out.size ? out : null;
}

/** CPU µs per kind of thread between two readings (a thread there at both counts its difference, a new one all of its time). */
export function threadDelta(before: Map<number, { kind: ThreadKind; us: number }>, after: Map<number, { kind: ThreadKind; us: number }>): Record<ThreadKind, number> {
  const sum: Record<ThreadKind, number> = { main: 0, v8: 0, other: 0 };
  for (const [tid, t] of after) sum[t.kind] += t.us - (before.get(tid)?.us ?? 0);
  return sum;
}

/** A /proc/<pid>/status memory field (VmHWM: peak resident set; VmRSS: resident now) in bytes; null if unreadable. */
function statusBytes(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * The field summed over root's tree, and where the figure came from ('VmHWM', or 'VmHWM sum of 3' for a tree). A sum
 * of peaks can exceed the tree's peak at any one moment: the processes need not have peaked together.
 */
export function treeMemory(root: number | undefined, field: 'VmHWM' | 'VmRSS'): { bytes: number | null; source: string } {
  const values = treePids(root).map((pid) => statusBytes(pid, field));
  if (!values.length || values.some((v) => v === null)) return { bytes: null, source: field };
  return { bytes: values.reduce((a, b) => a! + b!, 0), source: values.length === 1 ? field : `${field} sum of ${values.length}` };
}
