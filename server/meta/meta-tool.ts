import type { z } from 'zod';
import { parseArguments } from '../../core/errors.js';
import type { Caller } from '../../store/api-keys.js';
import type { ServiceContext } from '../context.js';

/**
 * One meta-tool: a name, a description a model can act on, a zod input schema, and a handler.
 * The MCP server, the JSON HTTP API and the OpenAPI document are all generated from these.
 */
export interface MetaTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  handler(ctx: ServiceContext, caller: Caller, args: z.infer<S>): Promise<unknown>;
}

export const defineMetaTool = <S extends z.ZodType>(tool: MetaTool<S>): MetaTool => tool as unknown as MetaTool;

/** Validates the arguments, then runs the handler. Errors are ToolErrors with the spec's bodies. */
export function runMetaTool(tool: MetaTool, ctx: ServiceContext, caller: Caller, args: unknown): Promise<unknown> {
  return tool.handler(ctx, caller, parseArguments(tool.name, tool.input, args));
}
