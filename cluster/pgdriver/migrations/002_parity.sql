-- Parity with the Redis store: fixed IDs and their done markers, done
-- records bounded by age and number, and the per-minute timeline.

-- fixed: the caller fixed the task's ID (a user's ID, a periodic
-- occurrence), so a completion (or the cancel of an occurrence) leaves a
-- done marker holding the ID for the retention.
ALTER TABLE stpe_tasks ADD COLUMN fixed boolean NOT NULL DEFAULT false;

-- Trimming the done records past the number kept: newest first.
CREATE INDEX stpe_tasks_finished ON stpe_tasks (finished_at DESC, id DESC) WHERE state = 'done';

-- The done markers: a fixed ID that completed (or a periodic occurrence
-- that was canceled) is remembered until expires_at with what ran under
-- it (kind, due time and the payload's MD5), so that storing the same
-- task again answers done, and another task a conflict, whether or not
-- its done record is kept.
CREATE TABLE stpe_done_marks (
    id          text        PRIMARY KEY,
    kind        text        NOT NULL,
    due         timestamptz NOT NULL,
    payload_md5 text        NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX stpe_done_marks_expires ON stpe_done_marks (expires_at);

-- The per-minute timeline: per partition, minute (since the Unix epoch),
-- kind and field ("<bucket>" runs by start lateness bucket, "f" failed or
-- timed-out runs, "l" lost runs) a count, kept until expires_at (set by
-- the count that creates the row).
CREATE TABLE stpe_timeline (
    partition  integer     NOT NULL,
    minute     bigint      NOT NULL,
    kind       text        NOT NULL,
    field      text        NOT NULL,
    count      bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (minute, partition, kind, field)
);
CREATE INDEX stpe_timeline_expires ON stpe_timeline (expires_at);

-- stpe_late_bucket is the timeline's bucket of a start lateness of us
-- microseconds: 0 for none, else four buckets per power of two (the
-- bucket 1 + 4e + the quarter of [2^e, 2^(e+1)) us falls in, e the
-- index of its highest bit), at most 96;
-- the same as the cluster package's latenessBucket and the Redis
-- scripts' late_bucket.
CREATE FUNCTION stpe_late_bucket(us bigint) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN us < 1 THEN 0 ELSE least(96, 1 + 4 * e + (CASE
        WHEN e >= 2 THEN (us >> (e - 2)) & 3
        ELSE (us << (2 - e)) & 3 END)::integer) END
    FROM (SELECT length(ltrim(greatest(us, 1)::bit(64)::text, '0')) - 1 AS e) AS p
$$;
