-- What the nodes of a database share beside the tasks: the layout record,
-- the member records in full, and the periodic declarations.

-- The layout: one row, written by the first node that checks it, naming
-- the driver's layout version and the number of partitions; every later
-- node must agree with it.
CREATE TABLE stpe_layout (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version    text    NOT NULL,
    partitions integer NOT NULL
);

-- A member's record as its node reports it at each renewal: its own
-- start time, its workers, what it runs and holds, and (claim_kinds) the
-- kinds it claims while it is among the claimers (claims).
ALTER TABLE stpe_members
    ADD COLUMN node_started timestamptz,
    ADD COLUMN concurrency  integer NOT NULL DEFAULT 0,
    ADD COLUMN running      integer NOT NULL DEFAULT 0,
    ADD COLUMN windowed     integer NOT NULL DEFAULT 0,
    ADD COLUMN waiting      integer NOT NULL DEFAULT 0,
    ADD COLUMN owned        integer NOT NULL DEFAULT 0,
    ADD COLUMN backed_up    integer NOT NULL DEFAULT 0,
    ADD COLUMN claim_kinds  text[]  NOT NULL DEFAULT '{}';

-- The periodic tasks the live nodes declare, each kept as long as the
-- longest membership of a node declaring it, with its last run.
CREATE TABLE stpe_periodic_decls (
    name         text        PRIMARY KEY,
    trigger_text text        NOT NULL,
    next_at      timestamptz,
    expires_at   timestamptz NOT NULL,
    last_node    text        NOT NULL DEFAULT '',
    last_due     timestamptz,
    last_started timestamptz,
    last_ended   timestamptz,
    last_outcome text        NOT NULL DEFAULT '',
    last_error   text        NOT NULL DEFAULT ''
);

-- stpe_renew renews node p_node's membership, record and periodic
-- declarations for p_ttl_us microseconds, in one call: see the driver's
-- Renew. It returns the database's time, whether the claimers changed,
-- and the live claimers (names and their kinds joined by spaces), by name.
CREATE FUNCTION stpe_renew(
    p_node text, p_ttl_us bigint, p_claimer boolean, p_claim_kinds text[],
    p_host text, p_pid integer, p_version text, p_started timestamptz, p_concurrency integer,
    p_running integer, p_windowed integer, p_waiting integer, p_owned integer, p_backed_up integer,
    p_kinds text[], p_stopping boolean,
    p_names text[], p_triggers text[], p_nexts timestamptz[],
    OUT now_us bigint, OUT changed boolean, OUT live_names text[], OUT live_kinds text[])
LANGUAGE plpgsql AS $$
DECLARE
    t   timestamptz := statement_timestamp();
    exp timestamptz;
    was boolean;
BEGIN
    now_us := (extract(epoch FROM t) * 1000000)::bigint;
    -- A membership that expired counts as none: whoever renewed meanwhile
    -- saw the claimers without this node, so its coming back is a change.
    SELECT claims AND expires_at > t INTO was FROM stpe_members WHERE id = p_node FOR UPDATE;
    was := coalesce(was, false);
    IF p_ttl_us <= 0 THEN
        DELETE FROM stpe_members WHERE id = p_node;
        changed := was;
        RETURN;
    END IF;
    exp := t + p_ttl_us * interval '1 microsecond';
    changed := p_claimer <> was;
    INSERT INTO stpe_members AS m (id, host, pid, version, kinds, claims, stopping, heartbeat_at, expires_at,
        node_started, concurrency, running, windowed, waiting, owned, backed_up, claim_kinds)
    VALUES (p_node, p_host, p_pid, p_version, p_kinds, p_claimer, p_stopping, t, exp,
        p_started, p_concurrency, p_running, p_windowed, p_waiting, p_owned, p_backed_up,
        CASE WHEN p_claimer THEN p_claim_kinds ELSE '{}' END)
    ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, version = EXCLUDED.version,
        kinds = EXCLUDED.kinds, claims = EXCLUDED.claims, stopping = EXCLUDED.stopping,
        heartbeat_at = t, expires_at = exp, node_started = EXCLUDED.node_started,
        concurrency = EXCLUDED.concurrency, running = EXCLUDED.running, windowed = EXCLUDED.windowed,
        waiting = EXCLUDED.waiting, owned = EXCLUDED.owned, backed_up = EXCLUDED.backed_up,
        claim_kinds = EXCLUDED.claim_kinds;
    -- A declaration lives as long as its longest-lived declaring node; one
    -- found expired starts afresh (its last run went with it).
    INSERT INTO stpe_periodic_decls AS d (name, trigger_text, next_at, expires_at)
    SELECT DISTINCT ON (n) n, tr, nx, exp FROM unnest(p_names, p_triggers, p_nexts) AS u(n, tr, nx)
    ON CONFLICT (name) DO UPDATE SET trigger_text = EXCLUDED.trigger_text, next_at = EXCLUDED.next_at,
        expires_at = CASE WHEN d.expires_at <= t THEN exp ELSE greatest(d.expires_at, exp) END,
        last_node = CASE WHEN d.expires_at <= t THEN '' ELSE d.last_node END,
        last_due = CASE WHEN d.expires_at <= t THEN NULL ELSE d.last_due END,
        last_started = CASE WHEN d.expires_at <= t THEN NULL ELSE d.last_started END,
        last_ended = CASE WHEN d.expires_at <= t THEN NULL ELSE d.last_ended END,
        last_outcome = CASE WHEN d.expires_at <= t THEN '' ELSE d.last_outcome END,
        last_error = CASE WHEN d.expires_at <= t THEN '' ELSE d.last_error END;
    -- The expired records go; rows another renewal holds are skipped, so
    -- that two renewals never wait on each other. An expired claimer is a
    -- change of the claimers.
    WITH gone AS (
        DELETE FROM stpe_members WHERE id IN (
            SELECT id FROM stpe_members WHERE expires_at <= t FOR UPDATE SKIP LOCKED)
        RETURNING claims)
    SELECT changed OR coalesce(bool_or(claims), false) INTO changed FROM gone;
    DELETE FROM stpe_periodic_decls WHERE name IN (
        SELECT name FROM stpe_periodic_decls WHERE expires_at <= t FOR UPDATE SKIP LOCKED);
    SELECT coalesce(array_agg(id ORDER BY id), '{}'), coalesce(array_agg(array_to_string(claim_kinds, ' ') ORDER BY id), '{}')
    INTO live_names, live_kinds
    FROM stpe_members WHERE claims AND expires_at > t;
END
$$;
