import { inject } from 'vitest';
import { type Stack, startStackOn } from './stack.js';

export * from './stack.js';

/** A whole Switchboard for one test file, on the Temporal server and database of this run. */
export function startStack(options: { env?: Record<string, string>; worker?: boolean } = {}): Promise<Stack> {
  return startStackOn(
    {
      temporalAddress: inject('temporalAddress'),
      databaseUrl: inject('testDatabaseUrl'),
      workflowBundlePath: inject('workflowBundlePath'),
    },
    options,
  );
}
