import { sealedArguments } from '../../../core/approval-summary.js';
import type { Caller } from '../../../core/caller.js';
import type { ToolCallRequest } from '../../../core/execution.js';
import { cachedInputJsonSchema } from '../../../core/json-schema.js';
import type { ServiceContext } from '../../context.js';
import { sealArgument } from '../store/sealed-arguments.js';

/**
 * The calls as a tool batch's workflow input carries them: every argument its tool's schema (or
 * its name) marks secret sealed under the at-rest key (features/execution/store/sealed-arguments.ts), so an operator
 * decoding the batch's history in Temporal UI never reads one. A call whose tool this server cannot
 * describe yet (an upstream server lists it per account, once a credential is loaded) has all its
 * arguments sealed: which of them are secret is not known here.
 */
export async function callsForHistory(ctx: ServiceContext, caller: Caller, calls: ToolCallRequest[]): Promise<ToolCallRequest[]> {
  const registry = await ctx.registry.forTenant(caller.tenantId);
  return calls.map((call) => {
    const seal = (value: unknown) =>
      sealArgument(ctx.keyring, { tenantId: caller.tenantId, userId: caller.userId, tool: call.tool }, value);
    const args = call.args ?? {};
    const entry = registry.toolByQualifiedName(call.tool);
    if (!entry) return Object.keys(args).length ? { ...call, args: seal(args) } : call;
    return { ...call, args: sealedArguments(args, cachedInputJsonSchema(entry.tool), seal) };
  });
}
