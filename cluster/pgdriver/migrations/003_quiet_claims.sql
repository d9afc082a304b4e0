-- Claims and completions are told to no one. Every transaction that
-- notifies takes PostgreSQL's one lock of notifying commits, held until
-- its commit ends, so a notice per claim and per completion made them
-- queue behind each other and behind the inserts (at 1,000 tasks a
-- second the start lateness of tasks scheduled ahead grew to seconds). A
-- claim needs no notice: another node's claim of the same task finds it
-- gone. The notices left: a task inserted, made pending (a retry, a
-- release, a reap, a resume) or dead, and a cancel, which Cancel sends
-- itself ("removed <kind> <id>"), whatever it leaves behind.
DROP TRIGGER stpe_tasks_changed ON stpe_tasks;
CREATE TRIGGER stpe_tasks_changed AFTER UPDATE ON stpe_tasks
    FOR EACH ROW WHEN (NEW.state IN ('pending', 'dead')
        AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.run_at IS DISTINCT FROM NEW.run_at))
    EXECUTE FUNCTION stpe_notify_task();
DROP TRIGGER stpe_tasks_removed ON stpe_tasks;
