/**
 * Clean-up steps, run the last added first (what started last depends on what started before it).
 * Every step runs even when one fails; the first failure is thrown once all have run.
 */
export class Teardown {
  private readonly steps: (() => unknown)[] = [];

  add(step: () => unknown): void {
    this.steps.push(step);
  }

  async run(): Promise<void> {
    let failure: unknown;
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  }
}
