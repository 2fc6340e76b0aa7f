import type { ToolErrorCode } from './execution.js';
import type { policyRefusal } from './policy.js';

type PolicyRefusal = NonNullable<ReturnType<typeof policyRefusal>>;

/**
 * What a caller is told when the tenant policy refuses a tool: the same code and words whether the
 * tool runs here (features/execution/execute-tool.ts) or at a remote source (features/sources/composite.ts).
 * `toolName` is the name the caller used.
 */
export function policyRefusalAnswer(
  refusal: PolicyRefusal,
  provider: string,
  toolName: string,
): { code: Extract<ToolErrorCode, 'forbidden' | 'provider_disabled'>; message: string } {
  switch (refusal) {
    case 'role':
      return { code: 'forbidden', message: 'You have no role that may use connections.' };
    case 'provider':
      return { code: 'provider_disabled', message: `${provider} is not enabled for your organisation.` };
    case 'tool':
      return { code: 'forbidden', message: `${toolName} is not allowed by your organisation's tool settings.` };
  }
}
