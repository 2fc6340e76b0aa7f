/**
 * The dynamic configuration Switchboard runs Temporal with, dev server and real server alike: the
 * dev server gets it as `--dynamic-config-value` flags (temporal-dev-server.ts), the real server as
 * deploy/temporal/dynamicconfig.yaml, which test/unit/docker-compose.test.ts keeps equal to this.
 */
export const TEMPORAL_DYNAMIC_CONFIG: Readonly<Record<string, boolean | number | string>> = {
  // A new batch's first workflow task comes back in the start response (when the starting process
  // also runs a worker on the same connection), skipping a trip through matching.
  'system.enableEagerWorkflowStart': true,
  // A workflow's normal activities come back in its task's completion when its worker has a free slot.
  'system.enableActivityEagerExecution': true,
  // wait_for_connection and wait_for_approval are workflow updates.
  'frontend.enableUpdateWorkflowExecution': true,
};

/** `KEY=JSON` values for `temporal server start-dev --dynamic-config-value`. */
export const DYNAMIC_CONFIG_FLAGS: string[] = Object.entries(TEMPORAL_DYNAMIC_CONFIG).map(
  ([key, value]) => `${key}=${JSON.stringify(value)}`,
);
