-- Up Migration

-- Finding 8: after the first OIDC sign-in a user is bound to the identity provider's issuer and
-- subject; later sign-ins match on these, never on an email alone.
ALTER TABLE users ADD COLUMN oidc_issuer text, ADD COLUMN oidc_subject text;
ALTER TABLE users ADD CONSTRAINT users_oidc_identity_complete CHECK ((oidc_issuer IS NULL) = (oidc_subject IS NULL));
CREATE UNIQUE INDEX users_oidc_identity_idx ON users (oidc_issuer, oidc_subject) WHERE oidc_subject IS NOT NULL;

-- Finding 9: every portal session cookie carries the user's session version, compared on each
-- request; sign-out, a role change or an API key revocation bumps it, ending those sessions.
ALTER TABLE users ADD COLUMN session_version integer NOT NULL DEFAULT 0;
