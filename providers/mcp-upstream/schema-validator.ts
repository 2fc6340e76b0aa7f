import { createRequire } from 'node:module';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/**
 * The validator for upstream servers' input schemas: the SDK's own ajv and ajv-formats (its
 * dependencies, resolved from where the SDK is installed), set up as the SDK's default instance
 * except that it stops at the first error. The default collects every error (`allErrors`): one
 * failing keyword per subschema per value, so a megabyte of arguments against an `anyOf` of a
 * hundred branches builds tens of millions of error objects and exhausts the worker's memory.
 * Stopping at the first error keeps the errors of a call bounded by the schema (schema-cost.ts
 * bounds the subschemas one value meets); the answer names the first problem only.
 */
export function upstreamSchemaValidator(): AjvJsonSchemaValidator {
  const sdkRequire = createRequire(import.meta.resolve('@modelcontextprotocol/sdk/validation/ajv'));
  const Ajv = sdkRequire('ajv') as { default: new (options: Record<string, unknown>) => unknown };
  const addFormats = sdkRequire('ajv-formats') as { default: (ajv: unknown) => unknown };
  const ajv = new Ajv.default({ strict: false, validateFormats: true, validateSchema: false, allErrors: false });
  addFormats.default(ajv);
  return new AjvJsonSchemaValidator(ajv as ConstructorParameters<typeof AjvJsonSchemaValidator>[0]);
}
