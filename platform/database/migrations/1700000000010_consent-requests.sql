-- Up Migration

-- When the attempt's current OAuth state was handed to a browser (the connect link's redirect to
-- the consent page). A consent request is good for ten minutes, like the browser-binding cookie
-- the connect link sets with it, and a user has a bounded number open at once.
ALTER TABLE connection_attempts ADD COLUMN consent_requested_at timestamptz;

-- Down Migration
ALTER TABLE connection_attempts DROP COLUMN consent_requested_at;
