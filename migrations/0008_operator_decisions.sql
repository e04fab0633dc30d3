-- The operator's decision on an email the content lock blocked (POST /admin/outbox/release):
-- release (sent after all) or reject (never sent), once; who, when (ms UTC) and why.
ALTER TABLE emails ADD COLUMN operator_decision TEXT;
ALTER TABLE emails ADD COLUMN operator_by TEXT;
ALTER TABLE emails ADD COLUMN operator_at_ms INTEGER;
ALTER TABLE emails ADD COLUMN operator_reason TEXT;
