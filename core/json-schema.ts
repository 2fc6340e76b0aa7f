import { z } from 'zod';

/**
 * What a caller sends for a tool, as JSON Schema: the input view (a field with a default is
 * optional), without `$schema` (the documents it goes into name their own dialect). A zod type
 * with no JSON Schema form becomes `{}` rather than failing the whole listing.
 */
export function inputJsonSchema(tool: { input: z.ZodType; inputSchema?: Record<string, unknown> }): Record<string, unknown> {
  if (tool.inputSchema) return tool.inputSchema;
  const { $schema: _dialect, ...schema } = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return schema;
}

const schemas = new WeakMap<object, Record<string, unknown>>();

/**
 * inputJsonSchema made once per tool (zod's conversion is not free, and every call of a batch asks
 * for it to find its secret arguments). Shared: read it, never change it.
 */
export function cachedInputJsonSchema(tool: { input: z.ZodType; inputSchema?: Record<string, unknown> }): Record<string, unknown> {
  const known = schemas.get(tool);
  if (known) return known;
  const schema = inputJsonSchema(tool);
  schemas.set(tool, schema);
  return schema;
}
