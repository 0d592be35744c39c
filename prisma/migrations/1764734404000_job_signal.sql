-- Up Migration

-- The operator's signal to a job waiting for one (a REPAIR waits for the repair's outcome):
-- {outcome, note, signalledBy, signalledAt}; the workflow agent forwards it to the workflow.
ALTER TABLE jobs ADD COLUMN signal jsonb;

-- Down Migration
ALTER TABLE jobs DROP COLUMN signal;
