-- The tasks of the cluster, one row each, in one of four states:
-- pending (waiting for run_at), running (claimed, under a lease), dead
-- (out of retries or lost runs) and done (kept until expires_at for the
-- retention, then deleted in batches).
CREATE TABLE stpe_tasks (
    id            text        PRIMARY KEY,
    kind          text        NOT NULL,
    payload       bytea       NOT NULL,
    partition     integer     NOT NULL CHECK (partition >= 0),
    state         text        NOT NULL CHECK (state IN ('pending', 'running', 'dead', 'done')),
    due           timestamptz NOT NULL, -- the time it was scheduled for
    run_at        timestamptz NOT NULL, -- when it is to run next (later after a failure)
    max_retries   integer     NOT NULL CHECK (max_retries >= 0),
    attempts      integer     NOT NULL DEFAULT 0, -- failed runs
    lost_runs     integer     NOT NULL DEFAULT 0, -- runs whose lease expired
    lease_token   text,                           -- the claim's owner token while running
    lease_expires timestamptz,                    -- by the database's clock
    claimed_at    timestamptz,
    claimed_by    text,                           -- the name of the node that claimed it
    history       jsonb       NOT NULL DEFAULT '[]', -- the last runs (stpe_add_run)
    last_error    text        NOT NULL DEFAULT '',
    metadata      text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
    updated_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
    finished_at   timestamptz,                    -- done or dead
    expires_at    timestamptz,                    -- done: when retention frees the ID
    CHECK ((state = 'running') = (lease_token IS NOT NULL AND lease_expires IS NOT NULL))
);

-- A claim and a window load: the pending tasks by run_at, in order (a
-- batch claim reads them oldest first and stops at its limit), and by
-- partition and run_at (the window of a node that owns few partitions).
CREATE INDEX stpe_tasks_due ON stpe_tasks (run_at) WHERE state = 'pending';
CREATE INDEX stpe_tasks_pending ON stpe_tasks (partition, run_at) WHERE state = 'pending';
-- The reaper: the running tasks by lease expiry.
CREATE INDEX stpe_tasks_leases ON stpe_tasks (lease_expires) WHERE state = 'running';
-- Retention: the done tasks by the time they expire.
CREATE INDEX stpe_tasks_done ON stpe_tasks (expires_at) WHERE state = 'done';
-- Listing and counting by kind and state.
CREATE INDEX stpe_tasks_kind_state ON stpe_tasks (kind, state);

-- stpe_add_run appends the record of a run that ended now to a task's
-- history and keeps the last ten: node, start and end (µs since the
-- epoch), outcome and error.
CREATE FUNCTION stpe_add_run(history jsonb, node text, started timestamptz, outcome text, error text)
RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(run ORDER BY i), '[]')
    FROM (
        SELECT run, i
        FROM jsonb_array_elements(history || jsonb_build_array(jsonb_build_object(
            'node', coalesce(node, ''),
            'start', (extract(epoch FROM started) * 1000000)::bigint,
            'end', (extract(epoch FROM statement_timestamp()) * 1000000)::bigint,
            'outcome', outcome,
            'error', coalesce(error, '')))) WITH ORDINALITY AS runs(run, i)
        ORDER BY i DESC
        LIMIT 10
    ) AS last
$$;

-- Kinds whose pending tasks no node claims nor loads until resumed.
CREATE TABLE stpe_paused_kinds (
    kind      text        PRIMARY KEY,
    paused_at timestamptz NOT NULL DEFAULT statement_timestamp()
);

-- The started nodes, each renewing its row until expires_at.
CREATE TABLE stpe_members (
    id           text        PRIMARY KEY,
    host         text        NOT NULL DEFAULT '',
    pid          integer     NOT NULL DEFAULT 0,
    version      text        NOT NULL DEFAULT '',
    kinds        text[]      NOT NULL DEFAULT '{}',
    claims       boolean     NOT NULL DEFAULT true,
    stopping     boolean     NOT NULL DEFAULT false,
    started_at   timestamptz NOT NULL DEFAULT statement_timestamp(),
    heartbeat_at timestamptz NOT NULL DEFAULT statement_timestamp(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX stpe_members_expires ON stpe_members (expires_at);

-- The cursor of each periodic task: the latest occurrence stored, its
-- misfire policy and whether its occurrences may overlap.
CREATE TABLE stpe_periodic_cursors (
    name       text        PRIMARY KEY,
    last_due   timestamptz,
    misfire    text        NOT NULL DEFAULT 'coalesce',
    overlap    boolean     NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT statement_timestamp()
);

-- Every change of a task's state or next run time is told on its
-- partition's channel, in the transaction that makes it, so a notice goes
-- out only once the change is committed. The payload is
-- "<state> <run_at in µs since the epoch> <kind> <id>", or
-- "removed <kind> <id>" for a task deleted before it was done.
CREATE FUNCTION stpe_notify_task() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('stpe_p' || OLD.partition, 'removed ' || OLD.kind || ' ' || OLD.id);
        RETURN OLD;
    END IF;
    PERFORM pg_notify('stpe_p' || NEW.partition,
        NEW.state || ' ' || (extract(epoch FROM NEW.run_at) * 1000000)::bigint || ' ' || NEW.kind || ' ' || NEW.id);
    RETURN NEW;
END
$$;

CREATE TRIGGER stpe_tasks_inserted AFTER INSERT ON stpe_tasks
    FOR EACH ROW EXECUTE FUNCTION stpe_notify_task();
CREATE TRIGGER stpe_tasks_changed AFTER UPDATE ON stpe_tasks
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.run_at IS DISTINCT FROM NEW.run_at)
    EXECUTE FUNCTION stpe_notify_task();
CREATE TRIGGER stpe_tasks_removed AFTER DELETE ON stpe_tasks
    FOR EACH ROW WHEN (OLD.state <> 'done')
    EXECUTE FUNCTION stpe_notify_task();
