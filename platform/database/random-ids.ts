import { randomBytes, randomUUID } from 'node:crypto';
import { ID_PREFIX } from '../../core/ids.js';

export const newId = (kind: keyof typeof ID_PREFIX): string => `${ID_PREFIX[kind]}${randomBytes(9).toString('base64url')}`;

export const newAttemptId = (): string => randomUUID();

/** A high-entropy opaque secret (API keys, login links, OAuth state). */
export const newSecret = (bytes = 24): string => randomBytes(bytes).toString('base64url');
