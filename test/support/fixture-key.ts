/**
 * The key that seals the recorded history fixtures in test/fixtures/histories. Test-only and
 * public on purpose: fixtures hold only test data, and replay needs to decode them.
 */
export const FIXTURE_KEY_ID = 'fixture';
export const FIXTURE_KEY = Buffer.alloc(32, 'switchboard-replay-fixtures-only').toString('base64');
export const FIXTURE_KEYRING_ENV = `${FIXTURE_KEY_ID}:${FIXTURE_KEY}`;
