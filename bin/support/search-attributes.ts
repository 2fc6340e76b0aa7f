import { isGrpcServiceError } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import type { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { SA } from '../../core/search-attributes.js';
import type { Pool } from '../../platform/database/database.js';
import { lockKey, transaction } from '../../platform/database/queryable.js';

/** How long a new attribute may take to reach the server's namespace cache (about 2 s on Temporal 1.31). */
const USABLE_WITHIN_MS = 30_000;

/**
 * Makes sure Switchboard's search attributes exist in `namespace` and can be used, before the
 * first workflow is started with them.
 *
 * On a real Temporal server the attributes are registered per namespace, and a new one is refused
 * in starts and queries until every frontend's namespace cache has it (about two seconds, although
 * the list answers at once): so after registering, this waits until a visibility query naming them
 * all is accepted. (The dev server hides this: it refreshes that cache on every read.) Processes of
 * one deployment starting together register under an advisory lock in their database, so the
 * server never sees two of them pick fields for the same attribute at once.
 */
export async function ensureSearchAttributes(
  connection: Pick<NativeConnection, 'operatorService' | 'workflowService'>,
  namespace: string,
  options: { pool?: Pool; logger?: Logger } = {},
): Promise<void> {
  const missing = await missingAttributes(connection, namespace);
  if (missing.length) {
    const register = async () => {
      const still = await missingAttributes(connection, namespace);
      if (!still.length) return;
      options.logger?.info({ namespace, searchAttributes: still.map((key) => key.name) }, 'registering search attributes');
      await connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(still.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!])),
      });
    };
    if (options.pool) {
      await transaction(options.pool, async (client) => {
        await lockKey(client, `temporal-search-attributes:${namespace}`);
        await register();
      });
    } else {
      await register();
    }
  }
  await untilQueryable(connection, namespace);
}

async function missingAttributes(connection: Pick<NativeConnection, 'operatorService'>, namespace: string) {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.values(SA).filter((key) => !(key.name in (existing.customAttributes ?? {})));
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === 5) {
      throw new Error(
        `Temporal namespace ${namespace} does not exist: create it first (deploy/temporal/setup.sh namespace, or \`temporal operator namespace create\`)`,
      );
    }
    throw err;
  }
}

/** A count query naming every attribute: refused while any is unknown to the frontend's namespace cache. */
async function untilQueryable(connection: Pick<NativeConnection, 'workflowService'>, namespace: string) {
  const query = Object.values(SA)
    .map((key) => `${key.name} = 'switchboard-probe'`)
    .join(' AND ');
  const deadline = Date.now() + USABLE_WITHIN_MS;
  for (;;) {
    try {
      await connection.workflowService.countWorkflowExecutions({ namespace, query });
      return;
    } catch (err) {
      const unknownYet = isGrpcServiceError(err) && err.code === 3; // INVALID_ARGUMENT: not a valid search attribute
      if (!unknownYet || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
