-- stpe_occurrence_rule as in 004_claims.sql, but a claim of an occurrence
-- under the "each" misfire policy that an earlier occurrence, pending and
-- due, holds up answers 'block' before it takes the advisory lock of the
-- occurrences' kind. After a store outage every node asks for every
-- occurrence of the backlog, again each time a run ends: queued on that
-- one lock, those claims held a connection each past their deadline, and
-- the completions of running tasks missed their leases behind them.
-- 'block' is safe on a read without the lock: the claim is only tried
-- again (when the lease's quarter passes, or at once on an "ended"
-- notice); the lock stays for the answers that let a claim through.
CREATE OR REPLACE FUNCTION stpe_occurrence_rule(occ text, asked timestamptz, misfire text, overlap boolean,
    next_due timestamptz, threshold bigint, occ_due timestamptz)
RETURNS TABLE (verdict text, blocked_until timestamptz) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    now_ timestamptz := statement_timestamp();
    occ_kind text;
    task record;
    lease_end timestamptz;
BEGIN
    SELECT t.kind, t.state, t.run_at, t.due, t.attempts,
        EXISTS (SELECT 1 FROM stpe_paused_kinds p WHERE p.kind = t.kind) AS paused
    INTO task FROM stpe_tasks t WHERE t.id = occ;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'claim', NULL::timestamptz;
        RETURN;
    END IF;
    occ_kind := task.kind;
    IF misfire = 'each' AND task.state = 'pending' AND NOT task.paused AND task.attempts = 0
            AND task.run_at <= asked AND task.run_at <= now_
            AND EXISTS (SELECT 1 FROM stpe_tasks o WHERE o.kind = task.kind AND o.state = 'pending'
                AND o.run_at <= now_ AND o.due < task.due) THEN
        RETURN QUERY SELECT 'block', NULL::timestamptz;
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(1937010789, hashtext(occ_kind));
    SELECT t.kind, t.state, t.run_at, t.due, t.attempts,
        EXISTS (SELECT 1 FROM stpe_paused_kinds p WHERE p.kind = t.kind) AS paused
    INTO task FROM stpe_tasks t WHERE t.id = occ;
    IF NOT FOUND OR task.state <> 'pending' OR task.paused OR task.run_at > asked OR task.run_at > now_ THEN
        RETURN QUERY SELECT 'claim', NULL::timestamptz;
        RETURN;
    END IF;
    IF task.attempts = 0 THEN
        IF misfire = 'each' THEN
            IF EXISTS (SELECT 1 FROM stpe_tasks o WHERE o.kind = task.kind AND o.state = 'pending'
                    AND o.run_at <= now_ AND o.due < task.due) THEN
                RETURN QUERY SELECT 'block', NULL::timestamptz;
                RETURN;
            END IF;
        ELSIF next_due <= now_
            OR misfire = 'skip' AND now_ - occ_due > threshold * interval '1 microsecond' THEN
            RETURN QUERY SELECT 'skip', NULL::timestamptz;
            RETURN;
        END IF;
    END IF;
    IF NOT overlap THEN
        SELECT min(o.lease_expires) INTO lease_end FROM stpe_tasks o WHERE o.kind = task.kind AND o.state = 'running';
        IF lease_end IS NOT NULL THEN
            RETURN QUERY SELECT 'block', lease_end;
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT 'claim', NULL::timestamptz;
END
$$;
