import type { ChildProcess } from 'node:child_process';

/** What a child process prints, collected, and awaited the way a person watches a terminal. */
export interface ChildOutput {
  /** Everything printed so far (stdout and stderr). */
  output(): string;
  /**
   * Resolves with the first match of `pattern` in what is printed from `from` on (an index into
   * output()); fails when the child exits first or after `timeoutMs`, with the last output to read.
   */
  waitFor(pattern: RegExp, options?: { from?: number; timeoutMs?: number }): Promise<RegExpExecArray>;
}

/** Starts collecting `child`'s stdout and stderr; `what` names the child in a failure ("npm start"). */
export function childOutput(child: ChildProcess, what: string): ChildOutput {
  let output = '';
  const listeners = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk;
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);

  const waitFor: ChildOutput['waitFor'] = (pattern, { from = 0, timeoutMs = 120_000 } = {}) =>
    new Promise((done, fail) => {
      const check = () => {
        const match = pattern.exec(output.slice(from));
        if (match) {
          cleanup();
          done(match);
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        fail(new Error(`${what} did not print ${pattern} within ${timeoutMs} ms:\n${output.slice(-3000)}`));
      }, timeoutMs);
      const onExit = () => {
        cleanup();
        fail(new Error(`${what} exited before printing ${pattern}:\n${output.slice(-3000)}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off('exit', onExit);
      };
      listeners.add(check);
      child.once('exit', onExit);
      check();
    });

  return { output: () => output, waitFor };
}
