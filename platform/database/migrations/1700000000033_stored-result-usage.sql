-- Up Migration

-- The bytes of stored results each user holds (STORED_RESULTS_MAX_BYTES_PER_USER bounds them), kept
-- by triggers on every insert and delete of stored_results (a store, its eviction, the daily prune,
-- a deleted user), so no bound check sums a user's rows. A store's insert locks its user's row
-- here until it commits: the stores of one user are serialised by it.
CREATE TABLE stored_result_usage (
  tenant_id text NOT NULL,
  user_id   text NOT NULL,
  bytes     bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);
INSERT INTO stored_result_usage (tenant_id, user_id, bytes)
  SELECT tenant_id, user_id, sum(total_bytes) FROM stored_results GROUP BY tenant_id, user_id;
-- A user over the bound loses their oldest results first.
CREATE INDEX stored_results_owner_idx ON stored_results (tenant_id, user_id, created_at);

CREATE FUNCTION stored_results_count_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stored_result_usage (tenant_id, user_id, bytes)
    SELECT tenant_id, user_id, sum(total_bytes) FROM added GROUP BY tenant_id, user_id
    ON CONFLICT (tenant_id, user_id) DO UPDATE SET bytes = stored_result_usage.bytes + EXCLUDED.bytes;
  RETURN NULL;
END $$;
CREATE TRIGGER stored_results_count_in AFTER INSERT ON stored_results
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION stored_results_count_in();

CREATE FUNCTION stored_results_count_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE stored_result_usage u SET bytes = u.bytes - g.bytes
    FROM (SELECT tenant_id, user_id, sum(total_bytes) AS bytes FROM gone GROUP BY tenant_id, user_id) g
   WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id;
  RETURN NULL;
END $$;
CREATE TRIGGER stored_results_count_out AFTER DELETE ON stored_results
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION stored_results_count_out();

-- Down Migration
DROP TRIGGER stored_results_count_out ON stored_results;
DROP TRIGGER stored_results_count_in ON stored_results;
DROP FUNCTION stored_results_count_out();
DROP FUNCTION stored_results_count_in();
DROP INDEX stored_results_owner_idx;
DROP TABLE stored_result_usage;
