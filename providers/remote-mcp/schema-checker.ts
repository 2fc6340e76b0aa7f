import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { CheckReply, CheckRequest } from './schema-check-thread.js';

/**
 * How long and how much a check of arguments against an upstream schema may take, in its worker
 * thread (schema-check-thread.ts says why compiling is done there). A real server's schema
 * compiles in well under 100 ms; one that takes longer than `compileMs` is remembered as too
 * costly and its tool's calls answer `invalid_arguments` at once, without trying again.
 */
export const SCHEMA_CHECK_LIMITS = {
  compileMs: 2000,
  checkMs: 1000,
  threadMemoryMb: 256,
  /** Checks of one server waiting for a thread; past it a call is refused, not queued. */
  waitingPerLane: 32,
  /** Schemas remembered as too costly or not compiling (least recently found forgotten first). */
  refusedSchemas: 1000,
} as const;

/** How long a new thread may take to load before its first check. */
const THREAD_START_MS = 10_000;

interface Job {
  request: CheckRequest;
  lane: string;
  resolve(problem: string | undefined): void;
}

interface CheckThread {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

const cannotCheck = (why: string) => `Switchboard cannot check arguments against this tool's schema: ${why}`;

/**
 * A small pool of worker threads checking arguments against upstream input schemas, so no
 * schema's compile or check runs on the event loop every tenant's requests share. Each server is
 * one lane: a lane has at most one check in a thread at once and lanes take turns, so a hostile
 * server occupies at most one thread however many calls its tenant sends; the other threads go
 * on answering every other server's checks. A check past its deadline ends its thread (the only
 * way to stop synchronous code) and a new one takes its place.
 */
export class SchemaChecker {
  /** Schemas compiled so far (a compiled schema is cached in its thread by its hash). */
  compiles = 0;
  private readonly threads: CheckThread[] = [];
  private readonly queue: Job[] = [];
  private readonly busyLanes = new Set<string>();
  private readonly refused = new Map<string, string>();
  private nextId = 0;

  private readonly limits: { compileMs: number; checkMs: number };
  private readonly size: number;

  constructor(options: { threads?: number; compileMs?: number; checkMs?: number } = {}) {
    this.size = options.threads ?? Math.max(2, Math.min(4, availableParallelism() - 1));
    this.limits = {
      compileMs: options.compileMs ?? SCHEMA_CHECK_LIMITS.compileMs,
      checkMs: options.checkMs ?? SCHEMA_CHECK_LIMITS.checkMs,
    };
  }

  /** Why `value` does not fit the schema (hash `key`), or undefined when it does. */
  check(lane: string, key: string, schema: Record<string, unknown>, value: unknown): Promise<string | undefined> {
    const refusal = this.refused.get(key);
    if (refusal) return Promise.resolve(refusal);
    if (this.queue.filter((j) => j.lane === lane).length >= SCHEMA_CHECK_LIMITS.waitingPerLane)
      return Promise.resolve(cannotCheck(`more than ${SCHEMA_CHECK_LIMITS.waitingPerLane} checks of this server are waiting`));
    return new Promise((resolve) => {
      this.queue.push({ request: { id: this.nextId++, key, schema, value }, lane, resolve });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private dispatch(): void {
    for (;;) {
      const index = this.queue.findIndex((j) => !this.busyLanes.has(j.lane));
      if (index < 0) return;
      const thread = this.threads.find((t) => !t.job) ?? (this.threads.length < this.size ? this.spawn() : undefined);
      if (!thread) return;
      const [job] = this.queue.splice(index, 1);
      // Another check of this schema may have found it too costly while this one waited.
      const refusal = this.refused.get(job.request.key);
      if (refusal) {
        job.resolve(refusal);
        continue;
      }
      this.busyLanes.add(job.lane);
      thread.job = job;
      thread.worker.ref();
      // A new thread loads ajv first: its start is not the schema's to pay for.
      this.arm(thread, THREAD_START_MS, () => cannotCheck('its checking thread did not start'));
      thread.worker.postMessage(job.request);
    }
  }

  private spawn(): CheckThread {
    const worker = new Worker(new URL('./schema-check-thread.ts', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: SCHEMA_CHECK_LIMITS.threadMemoryMb },
    });
    const thread: CheckThread = { worker };
    worker.unref();
    worker.on('message', (reply: CheckReply) => {
      if (!thread.job || reply.id !== thread.job.request.id) return;
      if (reply.phase === 'started') {
        const key = thread.job.request.key;
        this.arm(thread, this.limits.compileMs, () => this.refuse(key, `compiling it took longer than ${this.limits.compileMs} ms`));
        return;
      }
      if (reply.phase === 'compiled') {
        this.arm(thread, this.limits.checkMs, () => cannotCheck(`checking took longer than ${this.limits.checkMs} ms`));
        return;
      }
      if (reply.phase !== 'done') return;
      if (reply.compiled) this.compiles++;
      const problem = reply.uncompilable
        ? this.refuse(thread.job.request.key, `it does not compile (${reply.uncompilable})`)
        : reply.problem;
      this.finish(thread, problem);
    });
    // Out of memory, or any other end: the check in it cannot be answered; its schema is refused.
    worker.on('error', (err) => {
      if (thread.job) this.finish(thread, this.refuse(thread.job.request.key, `checking it failed (${err.message.slice(0, 80)})`), true);
    });
    worker.on('exit', () => {
      if (thread.job) this.finish(thread, cannotCheck('the check stopped'), true);
      this.remove(thread);
    });
    this.threads.push(thread);
    return thread;
  }

  /** A deadline for the thread's current phase: past it the thread is ended and the job answered `why()`. */
  private arm(thread: CheckThread, ms: number, why: () => string): void {
    clearTimeout(thread.timer);
    thread.timer = setTimeout(() => {
      if (thread.job) this.finish(thread, why(), true);
    }, ms);
  }

  private finish(thread: CheckThread, problem: string | undefined, endThread = false): void {
    const job = thread.job;
    if (!job) return;
    clearTimeout(thread.timer);
    thread.job = undefined;
    this.busyLanes.delete(job.lane);
    if (endThread) {
      this.remove(thread);
      void thread.worker.terminate();
    } else thread.worker.unref();
    job.resolve(problem);
    this.dispatch();
  }

  private remove(thread: CheckThread): void {
    const i = this.threads.indexOf(thread);
    if (i >= 0) this.threads.splice(i, 1);
  }

  /** Remembers the schema as one Switchboard will not check (bounded), and answers why. */
  private refuse(key: string, why: string): string {
    const message = cannotCheck(why);
    this.refused.delete(key);
    this.refused.set(key, message);
    if (this.refused.size > SCHEMA_CHECK_LIMITS.refusedSchemas) this.refused.delete(this.refused.keys().next().value as string);
    return message;
  }
}

let shared: SchemaChecker | undefined;
/** The process's checker, shared by every server and tenant (threads start at the first check). */
export function sharedSchemaChecker(): SchemaChecker {
  shared ??= new SchemaChecker();
  return shared;
}
