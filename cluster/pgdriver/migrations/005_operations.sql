-- The operators' reads (the Operations group): a page of tasks in a state
-- follows the listing's order from an index, never a sort of every task
-- of the state. Pending tasks are read from stpe_tasks_due (run_at; of
-- one kind too, or from stpe_tasks_kind_state when the planner reckons the
-- kind rare), running ones from stpe_tasks_leases, done ones from
-- stpe_tasks_finished; these add the rest. Both are partial on the states
-- a task ends in, so a pending or running row (the claims' and the
-- inserts' hot path) pays for neither.

-- The dead tasks, newest first (List, the bulk retry and delete).
CREATE INDEX stpe_tasks_dead ON stpe_tasks (finished_at DESC, id DESC) WHERE state = 'dead';
-- The dead tasks and done records of one kind, newest first.
CREATE INDEX stpe_tasks_ended_kind ON stpe_tasks (kind, state, finished_at DESC, id DESC)
    WHERE state IN ('dead', 'done');
