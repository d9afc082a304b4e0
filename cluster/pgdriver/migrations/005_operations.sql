-- The operators' reads (the Operations group): a page of tasks in a state
-- follows the listing's order from an index, never a sort of every task.
-- Pending tasks of every kind are read from stpe_tasks_due (run_at),
-- running ones from stpe_tasks_leases, done ones from
-- stpe_tasks_finished; these add the rest. Each is partial, so a row pays
-- for one only while it is in the index's state.

-- The pending tasks of one kind by run time (List of a kind, DueOfKind,
-- the bulk actions on a kind's pending tasks).
CREATE INDEX stpe_tasks_pending_kind ON stpe_tasks (kind, run_at, id) WHERE state = 'pending';
-- The dead tasks, newest first (List, the bulk retry and delete).
CREATE INDEX stpe_tasks_dead ON stpe_tasks (finished_at DESC, id DESC) WHERE state = 'dead';
-- The dead tasks and done records of one kind, newest first.
CREATE INDEX stpe_tasks_ended_kind ON stpe_tasks (kind, state, finished_at DESC, id DESC)
    WHERE state IN ('dead', 'done');
