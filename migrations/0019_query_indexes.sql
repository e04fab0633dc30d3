-- An index for every query of the admin pages, so a page reads the rows it shows, not a whole
-- table (tests/e2e-plans checks every query's plan with EXPLAIN QUERY PLAN):
-- the suppressions list and its log, newest first;
CREATE INDEX suppressions_by_update ON suppressions(updated_at_ms);
CREATE INDEX suppression_log_by_time ON suppression_log(at_ms);
-- a booking's holds on its timeline (by the prebook they hold);
CREATE INDEX holds_by_prebook ON holds(prebook_id);
-- the booking search by last name or full name, as typed (any case).
CREATE INDEX contacts_by_last_name_nocase ON contacts(last_name COLLATE NOCASE);
CREATE INDEX contacts_by_full_name_nocase ON contacts((first_name || ' ' || last_name) COLLATE NOCASE);
