import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export: under ESM the function may arrive wrapped once.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/**
 * The validator for upstream servers' input schemas: ajv and ajv-formats set up as the MCP SDK's
 * default instance except that it stops at the first error. The default collects every error
 * (`allErrors`): one failing keyword per subschema per value, so a megabyte of arguments against an
 * `anyOf` of a hundred branches builds tens of millions of error objects and exhausts the worker's
 * memory. Stopping at the first error keeps the errors of a call bounded by the schema
 * (schema-cost.ts bounds the subschemas one value meets); the answer names the first problem only.
 */
export function upstreamSchemaValidator(): AjvJsonSchemaValidator {
  const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: false });
  addFormats(ajv);
  return new AjvJsonSchemaValidator(ajv as unknown as ConstructorParameters<typeof AjvJsonSchemaValidator>[0]);
}
