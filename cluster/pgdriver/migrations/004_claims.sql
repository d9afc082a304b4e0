-- The claims of the driver: the periodic rules of an occurrence's claim,
-- and the notice that a periodic occurrence's run ended.

-- stpe_occurrence_rule decides what the misfire and overlap rules of a
-- periodic task say of the claim of its occurrence occ (asked for the time
-- asked), by the database's clock (the statement's): 'skip' when the
-- misfire policy skips it (a first run, not a retry: "coalesce" and
-- "skip" skip it once its next occurrence next_due is due, "skip" also
-- once it is later than threshold µs after its due time occ_due),
-- 'block' when it waits for an earlier occurrence due by now ("each":
-- blocked_until NULL) or, without overlap, for the run of another
-- occurrence (blocked_until that run's lease expiry), else 'claim'
-- (the claim then finds whether it is pending and due, as any claim).
-- It holds, until its transaction ends, the advisory lock of the
-- occurrences' kind (class 0x73747065, "stpe"), so two claims of a
-- periodic task's occurrences decide one after the other, each seeing the
-- other's outcome: every statement of a plpgsql function reads a fresh
-- snapshot. The Redis driver's lua/lib/misfire.lua; Quartz's misfire
-- instructions and @DisallowConcurrentExecution.
CREATE FUNCTION stpe_occurrence_rule(occ text, asked timestamptz, misfire text, overlap boolean,
    next_due timestamptz, threshold bigint, occ_due timestamptz)
RETURNS TABLE (verdict text, blocked_until timestamptz) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    now_ timestamptz := statement_timestamp();
    occ_kind text;
    task record;
    lease_end timestamptz;
BEGIN
    SELECT t.kind INTO occ_kind FROM stpe_tasks t WHERE t.id = occ;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'claim', NULL::timestamptz;
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

-- "ended <kind>" on the partition's channel when a run of a periodic
-- occurrence (a kind starting with "@") ends: its running row completed,
-- failed, handed back, reaped or canceled (updated out of running, or
-- deleted while running), in the transaction that ends it, so that the
-- nodes waiting to claim the task's next occurrence (without overlap)
-- look again at once. Other kinds pay only the triggers' WHEN.
CREATE FUNCTION stpe_notify_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('stpe_p' || OLD.partition, 'ended ' || OLD.kind);
    RETURN NULL;
END
$$;

CREATE TRIGGER stpe_tasks_run_ended AFTER UPDATE ON stpe_tasks
    FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running' AND left(OLD.kind, 1) = '@')
    EXECUTE FUNCTION stpe_notify_ended();
CREATE TRIGGER stpe_tasks_run_removed AFTER DELETE ON stpe_tasks
    FOR EACH ROW WHEN (OLD.state = 'running' AND left(OLD.kind, 1) = '@')
    EXECUTE FUNCTION stpe_notify_ended();
