import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

/**
 * One bash, fed commands the way a person pastes them into a terminal: each block runs in the same
 * shell (its variables, functions and background jobs carry over), and its output is collected.
 * Stdout and stderr are one stream, as on a terminal.
 */
export class ShellSession {
  private readonly bash: ChildProcessWithoutNullStreams;
  private text = '';
  private blocks = 0;
  private readonly listeners = new Set<() => void>();

  constructor(options: { cwd: string; env: NodeJS.ProcessEnv }) {
    // Its own process group: close() ends whatever the blocks left running (a background worker).
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd: options.cwd, env: options.env, detached: true });
    const append = (chunk: Buffer) => {
      this.text += chunk;
      for (const listener of this.listeners) listener();
    };
    this.bash.stdout.on('data', append);
    this.bash.stderr.on('data', append);
    this.bash.stdin.write('exec 2>&1\n');
  }

  /** Everything printed so far. */
  output(): string {
    return this.text;
  }

  /**
   * Runs `block` as pasted; `printed()` is what it has printed so far, `done` its whole output once
   * the shell is ready for the next block (with the exit status of its last command).
   */
  start(block: string): { printed: () => string; done: Promise<{ output: string; status: number }> } {
    const n = ++this.blocks;
    const from = this.text.length;
    const marker = new RegExp(`\\n::block ${n} done, status (\\d+)::\\n`);
    this.bash.stdin.write(`${block.trimEnd()}\nprintf '\\n::block ${n} done, status %s::\\n' "$?"\n`);
    const printed = () => this.text.slice(from).split(marker)[0];
    const done = new Promise<{ output: string; status: number }>((resolve, reject) => {
      const check = () => {
        const match = marker.exec(this.text.slice(from));
        if (!match) return;
        this.listeners.delete(check);
        resolve({ output: printed(), status: Number(match[1]) });
      };
      this.listeners.add(check);
      this.bash.once('exit', (code) => reject(new Error(`bash exited (${code}) during block ${n}:\n${printed()}`)));
      check();
    });
    return { printed, done };
  }

  /** Resolves once what `block` printed so far matches `pattern`. */
  async waitFor(printed: () => string, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(printed());
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`the shell did not print ${pattern} within ${timeoutMs} ms:\n${printed()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  close(): void {
    if (this.bash.exitCode === null) {
      try {
        process.kill(-this.bash.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
