-- Up Migration

-- The per-account call queue's two steps (store/account-slots.ts) as functions, so each is one
-- round trip instead of six (BEGIN, the account's lock, the statements, COMMIT): every tool call
-- takes a slot. The logic is the one those statements had. A function call is one statement, so
-- its transaction (and the advisory lock, taken first) lasts until the call returns; each statement
-- inside takes its own snapshot (READ COMMITTED, VOLATILE), so the count of tickets ahead sees every
-- ticket committed before the lock was granted.

-- Under the account's lock: lapsed tickets of the account go (and long-lapsed ones of any account:
-- dead workers' tickets of accounts no longer called), then the ticket takes a slot if fewer than
-- `max` live tickets hold a slot or wait ahead of it. SKIP LOCKED: two sweeps never wait on each other's rows.
CREATE FUNCTION account_call_slot_grant(p_tenant text, p_account text, p_ticket bigint, p_max integer, p_lease_ms double precision)
  RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
BEGIN
  DELETE FROM account_call_slots WHERE ticket IN (
    SELECT ticket FROM account_call_slots
     WHERE (tenant_id = p_tenant AND account_id = p_account AND lease_until <= now()) OR lease_until < now() - interval '1 hour'
     FOR UPDATE SKIP LOCKED);
  UPDATE account_call_slots SET granted = true, lease_until = now() + make_interval(secs => p_lease_ms / 1000)
   WHERE ticket = p_ticket AND tenant_id = p_tenant AND account_id = p_account
     AND (SELECT count(*) FROM account_call_slots o
           WHERE o.tenant_id = p_tenant AND o.account_id = p_account AND (o.granted OR o.ticket < p_ticket) AND o.ticket <> p_ticket
             AND o.lease_until > now()) < p_max;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n = 1;
END $$;

-- Joins the account's queue and takes a slot at once if one is free: the ticket, and whether it holds a slot.
CREATE FUNCTION account_call_slot_enqueue(p_tenant text, p_account text, p_max integer, p_lease_ms double precision)
  RETURNS TABLE (ticket text, granted boolean) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  t bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('account-call-slots:' || p_tenant || ':' || p_account, 0));
  INSERT INTO account_call_slots (tenant_id, account_id, lease_until)
    VALUES (p_tenant, p_account, now() + make_interval(secs => p_lease_ms / 1000)) RETURNING account_call_slots.ticket INTO t;
  RETURN QUERY SELECT t::text, account_call_slot_grant(p_tenant, p_account, t, p_max, p_lease_ms);
END $$;

-- A waiting ticket's next look: 'granted' when its turn came, else 'waiting' (its lease renewed),
-- or 'lost' when it lapsed (its worker stalled past a lease).
CREATE FUNCTION account_call_slot_try(p_tenant text, p_account text, p_ticket bigint, p_max integer, p_lease_ms double precision)
  RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('account-call-slots:' || p_tenant || ':' || p_account, 0));
  IF account_call_slot_grant(p_tenant, p_account, p_ticket, p_max, p_lease_ms) THEN
    RETURN 'granted';
  END IF;
  UPDATE account_call_slots SET lease_until = now() + make_interval(secs => p_lease_ms / 1000) WHERE ticket = p_ticket;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN CASE WHEN n = 1 THEN 'waiting' ELSE 'lost' END;
END $$;

-- Down Migration
DROP FUNCTION account_call_slot_try(text, text, bigint, integer, double precision);
DROP FUNCTION account_call_slot_enqueue(text, text, integer, double precision);
DROP FUNCTION account_call_slot_grant(text, text, bigint, integer, double precision);
