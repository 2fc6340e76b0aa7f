import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Switchboard's metrics, in one registry per process: tool calls, their latency, token
 * refreshes, pending connection waits, approvals and HTTP requests, plus Node's defaults. Each process
 * (HTTP server, worker, or both under `npm start`) serves them at /metrics on its operator port
 * (METRICS_PORT, bin/support/listen.ts), never on the public service port.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'switchboard_' });

export const toolCalls = new Counter({
  name: 'switchboard_tool_calls_total',
  help: 'Tool calls by provider, tool and outcome (ok or an error code)',
  labelNames: ['provider', 'tool', 'outcome'] as const,
  registers: [registry],
});

export const toolCallDuration = new Histogram({
  name: 'switchboard_tool_call_duration_seconds',
  help: 'Tool call latency inside the activity, by provider and outcome',
  labelNames: ['provider', 'outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const tokenRefreshes = new Counter({
  name: 'switchboard_token_refreshes_total',
  help: 'OAuth token refreshes by provider and outcome (ok or failed)',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

export const pendingConnectionWaits = new Gauge({
  name: 'switchboard_pending_connection_waits',
  help: 'wait_for_connection calls waiting right now in this process',
  registers: [registry],
});

export const approvalEvents = new Counter({
  name: 'switchboard_approvals_total',
  help: 'Approvals by event: requested (a gated call), approved, denied (a decision in this process), expired, cancelled',
  labelNames: ['event'] as const,
  registers: [registry],
});

export const keyTestsRefused = new Counter({
  name: 'switchboard_key_tests_refused_total',
  help: 'API-key submissions answered 429 because their user or tenant had as many key tests in flight as allowed',
  registers: [registry],
});

export const httpRequests = new Histogram({
  name: 'switchboard_http_request_duration_seconds',
  help: 'HTTP request latency by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300],
  registers: [registry],
});

/** The worker of this process, if any, read at scrape time. */
let trackedWorker:
  | { getStatus(): { numInFlightActivities: number; numInFlightWorkflowActivations: number; numCachedWorkflows: number } }
  | undefined;

export function trackWorker(worker: typeof trackedWorker): void {
  trackedWorker = worker;
}

const workerGauge = (
  name: string,
  help: string,
  read: (s: NonNullable<ReturnType<NonNullable<typeof trackedWorker>['getStatus']>>) => number,
) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      if (trackedWorker) this.set(read(trackedWorker.getStatus()));
    },
  });

workerGauge('switchboard_worker_activities_in_flight', 'Temporal activities running on this worker', (s) => s.numInFlightActivities);
workerGauge(
  'switchboard_worker_workflow_activations_in_flight',
  'Temporal workflow activations in flight',
  (s) => s.numInFlightWorkflowActivations,
);
workerGauge('switchboard_worker_cached_workflows', "Workflows held in this worker's sticky cache", (s) => s.numCachedWorkflows);
