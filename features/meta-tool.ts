import type { z } from 'zod';
import type { Caller } from '../core/caller.js';
import { formatIssues, MetaToolError } from '../core/errors.js';
import { jsonShapeExcess, MAX_ARGUMENT_NESTING, MAX_ARGUMENT_VALUES, MAX_OBJECT_KEYS } from '../core/json-depth.js';
import { forTenant } from './connections/services.js';
import type { ServiceContext } from './context.js';
import type { BatchProgress } from './execution/batch/batch-progress.js';

/**
 * One tool of a front-end surface: a name, a description a model can act on, a zod input
 * schema, and a handler. The MCP server, the JSON HTTP API and the OpenAPI document are all
 * generated from these.
 */
export interface MetaTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  handler(ctx: ServiceContext, caller: Caller, args: z.infer<S>, call: MetaToolCall): Promise<unknown>;
  /** The body answered for arguments that do not fit `input`; default `{error: "Invalid arguments for <name>: …"}`. */
  invalidArguments?(issues: readonly z.core.$ZodIssue[]): { error: unknown } & Record<string, unknown>;
}

/** What a surface offers one call beyond its arguments. */
interface MetaToolCall {
  /** MCP: the client sent a progressToken, and notifications/progress reach it on this request's stream. */
  progress?: BatchProgress;
  /** An MCP task runs the call: how its tool batch is started and joined (surfaces/mcp/tasks/). */
  batch?: BatchHooks;
}

/** What a task asks of the tool batch behind a call. */
export interface BatchHooks {
  /** Told the batch's workflow id once the batch exists in Temporal (before its calls finish). */
  onStarted?(workflowId: string): void;
  /**
   * Only join or read the batch the call's requestId already started; never start one (a task
   * collecting its result must not run its calls again once Temporal no longer has the batch).
   */
  joinOnly?: boolean;
  /** The batch may be cancelled (features/execution/workflow.ts `cancellable`). */
  cancellable?: boolean;
}

export const defineMetaTool = <S extends z.ZodType>(tool: MetaTool<S>): MetaTool => tool as unknown as MetaTool;

/** Validates the arguments (a 400 naming each bad one), then runs the handler. */
export async function runMetaTool(
  tool: MetaTool,
  ctx: ServiceContext,
  caller: Caller,
  args: unknown,
  call: MetaToolCall = {},
): Promise<unknown> {
  const invalid = (issues: readonly z.core.$ZodIssue[]) => {
    const body = tool.invalidArguments?.(issues) ?? { error: `Invalid arguments for ${tool.name}: ${formatIssues(issues)}` };
    return new MetaToolError(body as MetaToolError['body'], 400);
  };
  const excess = jsonShapeExcess(args, { depth: MAX_ARGUMENT_NESTING, values: MAX_ARGUMENT_VALUES, keys: MAX_OBJECT_KEYS });
  if (excess) {
    const message = {
      depth: `arguments are nested more than ${MAX_ARGUMENT_NESTING} levels deep`,
      values: `arguments hold more than ${MAX_ARGUMENT_VALUES} values`,
      keys: `an object in the arguments has more than ${MAX_OBJECT_KEYS} keys`,
    }[excess];
    throw invalid([{ code: 'custom', path: [], message, input: undefined }]);
  }
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) throw invalid(parsed.error.issues);
  // Every meta-tool (both MCP surfaces, the JSON API, the library's agent tools) sees the caller's tenant's view.
  return tool.handler(await forTenant(ctx, caller.tenantId), caller, parsed.data, call);
}
