import type { ClientRegistrationStore, StoredRegistration, TokenEndpointAuthMethod } from '../../core/ports/mcp-client-registrations.js';
import { Keyring } from './keyring.js';
import type { Queryable } from './queryable.js';

/**
 * Dynamic client registrations per scope and issuer (migrations 1700000000023, 028). The first registration stored
 * for an issuer wins (two processes registering at once both use it; the other is left unused at the
 * authorization server), and a replacement is a compare-and-set on the client id it replaces.
 */

const aad = (issuer: string, clientId: string) => `mcp-client-registration:${issuer}:${clientId}`;

interface Row {
  scope: string;
  issuer: string;
  client_id: string;
  token_endpoint_auth_method: string;
  redirect_uris: string[];
  client_secret_expires_at: string | null;
  registration_client_uri: string | null;
  sealed: string | null;
}

interface Secrets {
  clientSecret?: string;
  registrationAccessToken?: string;
}

function fromRow(keyring: Keyring, row: Row): StoredRegistration {
  const secrets: Secrets = row.sealed ? JSON.parse(keyring.decrypt(row.sealed, aad(row.issuer, row.client_id), 'client-registration')) : {};
  return {
    issuer: row.issuer,
    clientId: row.client_id,
    tokenEndpointAuthMethod: row.token_endpoint_auth_method as TokenEndpointAuthMethod,
    redirectUris: row.redirect_uris,
    ...(row.client_secret_expires_at && { clientSecretExpiresAt: Number(row.client_secret_expires_at) }),
    ...(row.registration_client_uri && { registrationClientUri: row.registration_client_uri }),
    ...(secrets.clientSecret && { clientSecret: secrets.clientSecret }),
    ...(secrets.registrationAccessToken && { registrationAccessToken: secrets.registrationAccessToken }),
  };
}

function columns(keyring: Keyring, r: StoredRegistration): unknown[] {
  const secrets: Secrets = { clientSecret: r.clientSecret, registrationAccessToken: r.registrationAccessToken };
  const sealed =
    secrets.clientSecret || secrets.registrationAccessToken
      ? keyring.encrypt(JSON.stringify(secrets), aad(r.issuer, r.clientId), 'client-registration')
      : null;
  return [
    r.issuer,
    r.clientId,
    r.tokenEndpointAuthMethod,
    JSON.stringify(r.redirectUris),
    r.clientSecretExpiresAt ?? null,
    r.registrationClientUri ?? null,
    sealed,
  ];
}

/** Whose registrations: the operator's upstream servers (`operator`) or one tenant's own (`tenant:<id>`). */
const OPERATOR_SCOPE = 'operator';

export async function findClientRegistration(
  db: Queryable,
  keyring: Keyring,
  issuer: string,
  scope = OPERATOR_SCOPE,
): Promise<StoredRegistration | undefined> {
  const { rows } = await db.query<Row>('SELECT * FROM mcp_client_registrations WHERE issuer = $1 AND scope = $2', [issuer, scope]);
  return rows[0] ? fromRow(keyring, rows[0]) : undefined;
}

/** Stores the registration unless the issuer has one already; answers the one kept. */
async function saveClientRegistration(
  db: Queryable,
  keyring: Keyring,
  registration: StoredRegistration,
  scope = OPERATOR_SCOPE,
): Promise<StoredRegistration> {
  const { rowCount } = await db.query(
    `INSERT INTO mcp_client_registrations
       (issuer, client_id, token_endpoint_auth_method, redirect_uris, client_secret_expires_at, registration_client_uri, sealed, scope)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (scope, issuer) DO NOTHING`,
    [...columns(keyring, registration), scope],
  );
  if (rowCount) return registration;
  return (await findClientRegistration(db, keyring, registration.issuer, scope)) ?? registration;
}

/** Replaces `previousClientId`'s registration; if another process replaced it first, answers theirs. */
async function replaceClientRegistration(
  db: Queryable,
  keyring: Keyring,
  previousClientId: string,
  registration: StoredRegistration,
  scope = OPERATOR_SCOPE,
): Promise<StoredRegistration> {
  const { rowCount } = await db.query(
    `UPDATE mcp_client_registrations
        SET client_id = $2, token_endpoint_auth_method = $3, redirect_uris = $4, client_secret_expires_at = $5,
            registration_client_uri = $6, sealed = $7, updated_at = now()
      WHERE issuer = $1 AND client_id = $8 AND scope = $9`,
    [...columns(keyring, registration), previousClientId, scope],
  );
  if (rowCount) return registration;
  return (
    (await findClientRegistration(db, keyring, registration.issuer, scope)) ?? saveClientRegistration(db, keyring, registration, scope)
  );
}

/** The store ensureClient (providers/remote-mcp/oauth-client) takes, for one scope's registrations. */
export function clientRegistrationStore(db: Queryable, keyring: Keyring, scope = OPERATOR_SCOPE): ClientRegistrationStore {
  return {
    find: (issuer) => findClientRegistration(db, keyring, issuer, scope),
    save: (registration) => saveClientRegistration(db, keyring, registration, scope),
    replace: (previous, registration) => replaceClientRegistration(db, keyring, previous, registration, scope),
  };
}

/** Re-seals every registration's secrets under the active key (`keys reseal`); returns how many moved. */
export async function resealClientRegistrations(db: Queryable, keyring: Keyring): Promise<number> {
  const { rows } = await db.query<Row>('SELECT * FROM mcp_client_registrations WHERE sealed IS NOT NULL');
  let moved = 0;
  for (const row of rows) {
    if (!row.sealed || Keyring.keyIdOf(row.sealed) === keyring.activeKeyId) continue;
    const aadOfRow = aad(row.issuer, row.client_id);
    const resealed = keyring.encrypt(keyring.decrypt(row.sealed, aadOfRow, 'client-registration'), aadOfRow, 'client-registration');
    const { rowCount } = await db.query(
      'UPDATE mcp_client_registrations SET sealed = $3 WHERE issuer = $1 AND sealed = $2 AND scope = $4',
      [row.issuer, row.sealed, resealed, row.scope],
    );
    moved += rowCount ?? 0;
  }
  return moved;
}
