import { describe, expect, it } from 'vitest';
import { redactedArguments, SECRET_PLACEHOLDER, sealedArguments, summariseArguments } from '../../core/approval-summary.js';

/** Names that name a secret: their value is never shown. */
const SECRET = [
  'password',
  'access_token',
  'accessToken',
  'apiKey',
  'api_key',
  'x-api-key',
  'X-API-Key',
  'APIKey',
  'apikey',
  'client_secret',
  'clientSecret',
  'private_key',
  'aws_secret_access_key',
  'refresh_token',
  'authorization',
  'Cookie',
  'session_cookie',
  'credentials',
  'passphrase',
  'db_passwd',
  'password2',
  'password_confirmation',
  'token',
  'apiToken',
  'GITHUB_TOKEN',
];

/** Names in which a secret-looking word is only part of another word, or qualifies another noun: shown. */
const SHOWN = [
  'bypass_pull_request_allowances',
  'token_address',
  'passenger_list',
  'secretary',
  'tokenizer',
  'keyword',
  'max_tokens',
  'token_type',
  'cookie_name',
  'secret_name',
  'private_key_id',
  'password_policy',
  'key',
  'issue_key',
  'passport_number',
  'keys',
];

describe('argument names that name a secret', () => {
  it('hides the value of every name that names a secret, on the page, the summary and in a batch’s history', () => {
    for (const name of SECRET) {
      const args = { [name]: `${name}-value-SECRET` };
      expect(redactedArguments(args, undefined)[name], name).toBe(SECRET_PLACEHOLDER);
      expect(summariseArguments(args, undefined)[name], name).toBe(SECRET_PLACEHOLDER);
      expect(sealedArguments(args, undefined, () => 'SEALED')[name], name).toBe('SEALED');
    }
  });

  it('shows the value of names that merely contain a secret-looking word', () => {
    for (const name of SHOWN) {
      const args = { [name]: `${name}-value` };
      expect(redactedArguments(args, undefined)[name], name).toBe(`${name}-value`);
      expect(sealedArguments(args, undefined, () => 'SEALED')[name], name).toBe(`${name}-value`);
    }
  });

  it('shows who may bypass a branch protection, nested as GitHub takes it', () => {
    const args = {
      required_pull_request_reviews: {
        bypass_pull_request_allowances: { users: ['mallory'], teams: ['outsiders'] },
        dismissal_restrictions: { users: [] },
      },
    };
    expect(redactedArguments(args, undefined)).toEqual(args);
  });
});
