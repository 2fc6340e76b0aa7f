import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failure messages and stack traces go through the payload codec too (they would otherwise sit
 * in history in clear). Loaded by path, so workflow bundles get the same converter.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
